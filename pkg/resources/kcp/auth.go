package kcp

import (
	"path"
	"sort"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
)

// Where the authentication configuration of kcp and kcp-front-proxy is mounted.
const (
	// AuthWebhookDir is where the token webhook's kubeconfig Secret is mounted.
	AuthWebhookDir = mountpaths.KcpAuthenticationDir + "/webhook"
	// TokenAuthFileDir is where the static token file's Secret is mounted.
	TokenAuthFileDir = mountpaths.KcpAuthenticationDir + "/token"
	// ServiceAccountKeysDir holds one directory per shard whose service-account public key
	// a component verifies tokens with.
	ServiceAccountKeysDir = mountpaths.ServiceAccountKeysDir
)

// ServiceAccountSecret is the Secret cert-manager writes a root shard's or a shard's
// service-account key pair to: the shard signs tokens with tls.key, others verify them with
// tls.crt.
func ServiceAccountSecret(shard string) string { return shard + "-service-account" }

// ServiceAccountEnabled reports whether auth.serviceAccount.enabled is set: the component then
// verifies the tokens of every shard of its RootShard, not only its own (a shard) or none (a
// front proxy).
func ServiceAccountEnabled(auth *operatorv1alpha1.AuthSpec) bool {
	return auth != nil && auth.ServiceAccount != nil && auth.ServiceAccount.Enabled
}

// ServiceAccountKeyArgs are one --service-account-key-file per issuer, each the tls.crt of its
// service-account Secret mounted by ServiceAccountKeyMounts.
func ServiceAccountKeyArgs(issuers []string) []string {
	var args []string
	for _, name := range issuers {
		args = append(args, "--service-account-key-file="+path.Join(ServiceAccountKeysDir, name, "tls.crt"))
	}
	return args
}

// AuthMount is a Secret that an authentication setting mounts read-only, projected to the
// keys the component reads: another object's key never enters the pod.
type AuthMount struct {
	Volume *corev1ac.VolumeApplyConfiguration
	Mount  *corev1ac.VolumeMountApplyConfiguration
	// Secret is the mounted Secret's name: a change to it rolls the pods.
	Secret string
}

func authMount(volume, secret, dir string, keys ...string) AuthMount {
	src := corev1ac.SecretVolumeSource().WithSecretName(secret)
	for _, k := range keys {
		src.WithItems(corev1ac.KeyToPath().WithKey(k).WithPath(k))
	}
	return AuthMount{
		Volume: corev1ac.Volume().WithName(volume).WithSecret(src),
		Mount:  corev1ac.VolumeMount().WithName(volume).WithMountPath(dir).WithReadOnly(true),
		Secret: secret,
	}
}

// UsersAuthMounts mount the Secrets a user names in auth: the OIDC issuer's CA, the token
// webhook's kubeconfig and the static token file, each with only the key the flag reads.
func UsersAuthMounts(auth *operatorv1alpha1.AuthSpec) []AuthMount {
	if auth == nil {
		return nil
	}
	var out []AuthMount
	if o := auth.OIDC; o != nil && o.CAFileRef != nil {
		out = append(out, authMount("oidc-ca", o.CAFileRef.Name, OIDCCADir, oidcCAKey(o)))
	}
	if w := auth.Webhook; w != nil {
		out = append(out, authMount("authentication-webhook", w.ConfigSecretName, AuthWebhookDir, KubeconfigKey))
	}
	if t := auth.TokenAuthFile; t != nil {
		out = append(out, authMount("token-auth-file", t.SecretName, TokenAuthFileDir, tokenAuthFileKey(t)))
	}
	return out
}

// ServiceAccountKeyMounts mount the tls.crt, and only it, of each issuer's service-account
// Secret: the private key stays with the shard that signs with it.
func ServiceAccountKeyMounts(issuers []string) []AuthMount {
	var out []AuthMount
	for _, name := range issuers {
		// Shard names are at most 59 characters (validation), so "sa-<name>" is a DNS label.
		out = append(out, authMount("sa-"+name, ServiceAccountSecret(name), path.Join(ServiceAccountKeysDir, name), "tls.crt"))
	}
	return out
}

// serviceAccountPeers are the issuers whose keys a shard verifies besides its own, when
// auth.serviceAccount is enabled: the others of its RootShard's, sorted and without duplicates.
func (s Server) serviceAccountPeers() []string {
	if !ServiceAccountEnabled(s.Spec.Auth) {
		return nil
	}
	var peers []string
	for _, name := range SortedIssuers(s.ServiceAccountIssuers) {
		if name != s.Name {
			peers = append(peers, name)
		}
	}
	return peers
}

func compact(sorted []string) []string {
	out := sorted[:0]
	for i, v := range sorted {
		if i == 0 || v != sorted[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// SortedIssuers sorts and deduplicates issuer names, so that the flags and mounts built from
// them are stable.
func SortedIssuers(names []string) []string {
	out := append([]string(nil), names...)
	sort.Strings(out)
	return compact(out)
}

func oidcCAKey(o *operatorv1alpha1.OIDCConfiguration) string {
	if o.CAFileRef.Key == "" {
		return operatorv1alpha1.DefaultOIDCCAKey
	}
	return o.CAFileRef.Key
}

func tokenAuthFileKey(t *operatorv1alpha1.TokenAuthFileSpec) string {
	if t.Key == "" {
		return operatorv1alpha1.DefaultTokenAuthFileKey
	}
	return t.Key
}
