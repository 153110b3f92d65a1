package kcp

import (
	"strings"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// authorizationHookDir is where the authorization webhook's kubeconfig is mounted.
const authorizationHookDir = mountpaths.KcpAuthorizationDir + "/webhook"

// Authorization is a shard's spec.authorization: the authorizers' order, the paths allowed
// without asking (allowPaths, or the deprecated webhook.allowPaths), and the authorization
// webhook's flags and its kubeconfig Secret, the user's.
func Authorization(authz *operatorv1alpha1.AuthorizationSpec) workload.Feature {
	if authz == nil {
		return workload.Feature{}
	}
	var args flags
	allowPaths := authz.AllowPaths
	if w := authz.Webhook; w != nil && len(allowPaths) == 0 {
		allowPaths = w.AllowPaths
	}
	args.opt("--authorization-always-allow-paths", strings.Join(allowPaths, ","), len(allowPaths) > 0)
	args.opt("--authorization-order", strings.Join(authz.Order, ","), len(authz.Order) > 0)
	w := authz.Webhook
	if w == nil {
		return workload.Feature{Args: args}
	}
	args = append(flags{"--authorization-webhook-config-file=" + authorizationHookDir + "/" + KubeconfigKey}, args...)
	args.opt("--authorization-webhook-cache-authorized-ttl", durationString(w.CacheAuthorizedTTL), w.CacheAuthorizedTTL != nil)
	args.opt("--authorization-webhook-cache-unauthorized-ttl", durationString(w.CacheUnauthorizedTTL), w.CacheUnauthorizedTTL != nil)
	args.opt("--authorization-webhook-version", w.Version, w.Version != "")
	return workload.Feature{
		Args: args,
		Mounts: []workload.Mount{{Volume: "authorization-webhook", Secret: w.ConfigSecretName, Dir: authorizationHookDir,
			User: true, Field: "webhook.configSecretName"}},
	}
}
