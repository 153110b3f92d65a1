package validation

import (
	"fmt"
	"net"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
)

// The warnings a create or an update returns with the object it stored: fields that are
// accepted for kcp-operator compatibility but deprecated there, or that have no effect here.
// Each names its field path and says what to use instead.

// RootShardWarnings are the warnings of a RootShard.
func RootShardWarnings(rs *operator.RootShard) []string {
	spec := field.NewPath("spec")
	var warnings []string
	warnings = append(warnings, commonShardWarnings(&rs.Spec.CommonShardSpec, rootShardTemplates, spec)...)
	warnings = append(warnings, embeddedCacheWarnings(rs.Spec.Cache, spec.Child("cache", "embedded"))...)
	return warnings
}

// ShardWarnings are the warnings of a Shard.
func ShardWarnings(s *operator.Shard) []string {
	return commonShardWarnings(&s.Spec.CommonShardSpec, shardTemplates, field.NewPath("spec"))
}

// FrontProxyWarnings are the warnings of a FrontProxy.
func FrontProxyWarnings(fp *operator.FrontProxy) []string {
	var warnings []string
	warnings = append(warnings, oidcClientSecretWarnings(fp.Spec.Auth, field.NewPath("spec", "auth"))...)
	warnings = append(warnings, externalHostnameWarnings(&fp.Spec, field.NewPath("spec", "externalHostname"))...)
	warnings = append(warnings, certificateTemplateWarnings(fp.Spec.CertificateTemplates, frontProxyTemplates, field.NewPath("spec", "certificateTemplates"))...)
	return warnings
}

// CacheServerWarnings are the warnings of a CacheServer.
func CacheServerWarnings(cs *operator.CacheServer) []string {
	spec := field.NewPath("spec")
	warnings := certificateTemplateWarnings(cs.Spec.CertificateTemplates, cacheServerTemplates, spec.Child("certificateTemplates"))
	warnings = append(warnings, etcdWarnings(cs.Spec.Etcd, spec.Child("etcd"))...)
	return append(warnings, cacheServerEtcdPrefixWarnings(cs.Spec.Etcd, imageVersion(cs.Spec.Image), spec.Child("etcd", "prefix"))...)
}

// cacheServerEtcdPrefixWarnings say that a cache server before kcp v0.33 ignores
// --etcd-prefix: its data goes under /cache whatever spec.etcd.prefix says.
func cacheServerEtcdPrefixWarnings(etcd *operator.EtcdConfig, v kcpversion.Version, fldPath *field.Path) []string {
	if etcd == nil || etcd.Prefix == "" || v.CacheServerEtcdPrefix(etcd.Prefix) == strings.TrimSuffix(etcd.Prefix, "/") {
		return nil
	}
	return []string{fmt.Sprintf("%s: the cache server of kcp %s ignores --etcd-prefix and keeps its data under %s; kcp honours %q from %s on",
		fldPath, v, kcpversion.CacheServerDefaultEtcdPrefix, etcd.Prefix, kcpversion.CacheServerEtcdPrefix)}
}

// KubeconfigWarnings are the warnings of a Kubeconfig.
func KubeconfigWarnings(kc *operator.Kubeconfig) []string {
	var warnings []string
	warnings = append(warnings, clusterRoleBindingsClusterWarnings(kc.Spec.Authorization, field.NewPath("spec", "authorization", "clusterRoleBindings", "cluster"))...)
	return warnings
}

// VirtualWorkspaceWarnings are the warnings of a VirtualWorkspace.
func VirtualWorkspaceWarnings(vw *operator.VirtualWorkspace) []string {
	spec := field.NewPath("spec")
	warnings := customServerIdentityWarnings(&vw.Spec, spec)
	return append(warnings, certificateTemplateWarnings(vw.Spec.CertificateTemplates, virtualWorkspaceTemplates, spec.Child("certificateTemplates"))...)
}

// customServerIdentityWarnings point a server that is not kcp's own (spec.command set) to a
// least-privilege identity: without spec.kubeconfigSecretRef it talks to its shard with the
// admin identity the controllers generate, as kcp's own server needs to, which a third-party
// binary rarely does. kcp-operator's sample gives it one.
func customServerIdentityWarnings(spec *operator.VirtualWorkspaceSpec, fldPath *field.Path) []string {
	if len(spec.Command) == 0 || spec.KubeconfigSecretRef != nil {
		return nil
	}
	return []string{fldPath.Child("command").String() + " runs a server other than kcp's own, and without " +
		fldPath.Child("kubeconfigSecretRef").String() + " it talks to its shard with the generated admin identity; " +
		"give it a least-privilege one: a Secret written by a Kubeconfig object, named in " + fldPath.Child("kubeconfigSecretRef").String()}
}

func commonShardWarnings(spec *operator.CommonShardSpec, roles certificateRoles, fldPath *field.Path) []string {
	var warnings []string
	warnings = append(warnings, shardAuthWarnings(spec.Auth, fldPath.Child("auth"))...)
	warnings = append(warnings, etcdWarnings(&spec.Etcd, fldPath.Child("etcd"))...)
	warnings = append(warnings, certificateTemplateWarnings(spec.CertificateTemplates, roles, fldPath.Child("certificateTemplates"))...)
	return append(warnings, authorizationWarnings(spec.Authorization, fldPath.Child("authorization"))...)
}

// authorizationWarnings point kcp-operator's deprecated webhook.allowPaths to its successor.
func authorizationWarnings(authz *operator.AuthorizationSpec, fldPath *field.Path) []string {
	if authz == nil || authz.Webhook == nil || len(authz.Webhook.AllowPaths) == 0 || len(authz.AllowPaths) > 0 {
		return nil
	}
	return []string{fldPath.Child("webhook", "allowPaths").String() + " is deprecated: use " + fldPath.Child("allowPaths").String() +
		", which it is read as (the paths are allowed without asking any authorizer, not only the webhook)"}
}

// etcdWarnings say what kcp makes of kcp-operator's etcd shapes that this server accepts
// as kcp-operator does: an endpoint without a scheme, and a prefix without a leading slash.
func etcdWarnings(etcd *operator.EtcdConfig, fldPath *field.Path) []string {
	if etcd == nil {
		return nil
	}
	var warnings []string
	scheme := "http://"
	if etcd.TLSConfig != nil {
		scheme = "https://"
	}
	for i, endpoint := range etcd.Endpoints {
		if endpoint != "" && schemeless(endpoint) {
			warnings = append(warnings, fmt.Sprintf("%s: %q has no scheme: kcp's etcd client dials it with TLS exactly when %s is set; write %q",
				fldPath.Child("endpoints").Index(i), endpoint, fldPath.Child("tlsConfig"), scheme+endpoint))
		}
	}
	if p := etcd.Prefix; p != "" && !strings.HasPrefix(p, "/") {
		warnings = append(warnings, fmt.Sprintf("%s: %q does not start with '/': kcp stores its keys under %q all the same; write %q",
			fldPath.Child("prefix"), p, "/"+p, "/"+p))
	}
	return warnings
}

// embeddedCacheWarnings explain kcp-operator's deprecated cache.embedded, which says nothing
// that cache.ref does not: the root shard uses its embedded cache exactly when no ref is set.
// true together with a ref asks for both; the ref wins, as in kcp-operator.
func embeddedCacheWarnings(cache *operator.CacheConfig, fldPath *field.Path) []string {
	if cache == nil || cache.Embedded == nil {
		return nil
	}
	ref := cache.Reference != nil || cache.SecretRef != nil
	switch {
	case ref && cache.Embedded.Enabled:
		return []string{fldPath.String() + ".enabled: true is ignored: the root shard uses the CacheServer of spec.cache and no embedded cache, as kcp-operator does when both are set; remove " + fldPath.String()}
	case ref:
		return []string{fldPath.String() + " is deprecated and has no effect: the root shard uses the CacheServer in spec.cache.ref and no embedded cache; remove " + fldPath.String()}
	case !cache.Embedded.Enabled:
		return []string{fldPath.String() + ".enabled: false has no effect: without spec.cache.ref the root shard still uses its embedded cache, as in kcp-operator; to use a CacheServer, set spec.cache.ref and remove " + fldPath.String()}
	default:
		return []string{fldPath.String() + " is deprecated: the root shard uses its embedded cache whenever spec.cache.ref is not set; remove " + fldPath.String()}
	}
}

// externalHostnameWarnings point kcp-operator's deprecated externalHostname to its successor.
func externalHostnameWarnings(spec *operator.FrontProxySpec, fldPath *field.Path) []string {
	if spec.ExternalHostname == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(spec.ExternalHostname)
	if err != nil {
		return []string{fldPath.String() + " is deprecated: use spec.external.hostname, which it is read as"}
	}
	if spec.External != nil && spec.External.Port != 0 {
		return []string{fmt.Sprintf("%s is deprecated: use spec.external.hostname: %s; its host is read as spec.external.hostname, and its port %s is ignored for spec.external.port %d, as in kcp-operator",
			fldPath, host, port, spec.External.Port)}
	}
	return []string{fmt.Sprintf("%s is deprecated: use spec.external.hostname: %s and spec.external.port: %s, which it is read as, as in kcp-operator",
		fldPath, host, port)}
}

// clusterRoleBindingsClusterWarnings point kcp-operator's deprecated
// clusterRoleBindings.cluster to its successor.
func clusterRoleBindingsClusterWarnings(authz *operator.KubeconfigAuthorization, fldPath *field.Path) []string {
	if authz == nil || authz.ClusterRoleBindings.Cluster == "" {
		return nil
	}
	return []string{fldPath.String() + " is deprecated: use spec.targetWorkspace"}
}
