package kcp

import (
	"strings"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// authorizationHookDir is where the authorization webhook's kubeconfig is mounted.
const authorizationHookDir = mountpaths.KcpAuthorizationDir + "/webhook"

// Authorization is a shard's spec.authorization: the authorization webhook's flags, and its
// kubeconfig Secret, the user's.
func Authorization(authz *operatorv1alpha1.AuthorizationSpec) workload.Feature {
	if authz == nil || authz.Webhook == nil {
		return workload.Feature{}
	}
	w := authz.Webhook
	args := []string{"--authorization-webhook-config-file=" + authorizationHookDir + "/" + KubeconfigKey}
	if len(w.AllowPaths) > 0 {
		args = append(args, "--authorization-always-allow-paths="+strings.Join(w.AllowPaths, ","))
	}
	if w.CacheAuthorizedTTL != nil {
		args = append(args, "--authorization-webhook-cache-authorized-ttl="+durationString(w.CacheAuthorizedTTL))
	}
	if w.CacheUnauthorizedTTL != nil {
		args = append(args, "--authorization-webhook-cache-unauthorized-ttl="+durationString(w.CacheUnauthorizedTTL))
	}
	if w.Version != "" {
		args = append(args, "--authorization-webhook-version="+w.Version)
	}
	return workload.Feature{
		Args:   args,
		Mounts: []workload.Mount{{Volume: "authorization-webhook", Secret: w.ConfigSecretName, Dir: authorizationHookDir, User: true, Field: "webhook.configSecretName"}},
	}
}
