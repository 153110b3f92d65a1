package kcp

import (
	"path"
	"sort"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// Where the authentication configuration of kcp and kcp-front-proxy is mounted: the same
// paths in both.
const (
	// OIDCCADir is where the OIDC issuer's CA Secret is mounted.
	OIDCCADir = mountpaths.KcpOIDCCADir
	// AuthWebhookDir is where the token webhook's kubeconfig Secret is mounted.
	AuthWebhookDir = mountpaths.KcpAuthenticationDir + "/webhook"
	// TokenAuthFileDir is where the static token file's Secret is mounted.
	TokenAuthFileDir = mountpaths.KcpAuthenticationDir + "/token"
	// ServiceAccountKeysDir holds one directory per shard whose service-account public key
	// a component verifies tokens with.
	ServiceAccountKeysDir = mountpaths.ServiceAccountKeysDir
)

// OIDC is auth.oidc of kcp and kcp-front-proxy: the --oidc-* flags, and the issuer's CA
// Secret of caFileRef, the user's, with only the key --oidc-ca-file reads.
func OIDC(auth *operatorv1alpha1.AuthSpec) workload.Feature {
	if auth == nil || auth.OIDC == nil {
		return workload.Feature{}
	}
	o := auth.OIDC
	args := []string{"--oidc-issuer-url=" + o.IssuerURL, "--oidc-client-id=" + o.ClientID}
	for flag, value := range map[string]string{
		"--oidc-groups-claim": o.GroupsClaim, "--oidc-username-claim": o.UsernameClaim,
		"--oidc-groups-prefix": o.GroupsPrefix, "--oidc-username-prefix": o.UsernamePrefix,
	} {
		if value != "" {
			args = append(args, flag+"="+value)
		}
	}
	var f workload.Feature
	if ref := o.CAFileRef; ref != nil {
		key := ref.Key
		if key == "" {
			key = operatorv1alpha1.DefaultOIDCCAKey
		}
		args = append(args, "--oidc-ca-file="+path.Join(OIDCCADir, key))
		f.Mounts = []workload.Mount{{Volume: "oidc-ca", Secret: ref.Name, Dir: OIDCCADir, Keys: []string{key}, User: true, Field: "oidc.caFileRef"}}
	}
	// The flags after the issuer and the client come from a map: sorted, they are stable.
	sort.Strings(args[2:])
	f.Args = args
	return f
}

// TokenWebhook is auth.webhook of kcp and kcp-front-proxy: the token webhook's flags, and its
// kubeconfig Secret, the user's, with only the kubeconfig. The flags exist on kcp start and
// kcp-front-proxy from kcp v0.30.0 on (upstream BuiltInAuthenticationOptions: kcp's
// pkg/server/options/flags.go allowedFlags, pkg/proxy/options/authentication.go WithWebHook).
func TokenWebhook(auth *operatorv1alpha1.AuthSpec) workload.Feature {
	if auth == nil || auth.Webhook == nil {
		return workload.Feature{}
	}
	w := auth.Webhook
	args := flags{"--authentication-token-webhook-config-file=" + AuthWebhookDir + "/" + KubeconfigKey}
	args.opt("--authentication-token-webhook-cache-ttl", durationString(w.CacheAuthenticationTTL), w.CacheAuthenticationTTL != nil)
	args.opt("--authentication-token-webhook-version", w.Version, w.Version != "")
	return workload.Feature{
		Args: args,
		Mounts: []workload.Mount{{Volume: "authentication-webhook", Secret: w.ConfigSecretName, Dir: AuthWebhookDir,
			Keys: []string{KubeconfigKey}, User: true, Field: "webhook.configSecretName"}},
	}
}

// TokenFile is auth.tokenAuthFile of kcp and kcp-front-proxy: --token-auth-file, and the
// static token file's Secret, the user's, with only its key (pkg/proxy/options
// WithTokenFile, as TokenWebhook's flags).
func TokenFile(auth *operatorv1alpha1.AuthSpec) workload.Feature {
	if auth == nil || auth.TokenAuthFile == nil {
		return workload.Feature{}
	}
	t := auth.TokenAuthFile
	key := t.Key
	if key == "" {
		key = operatorv1alpha1.DefaultTokenAuthFileKey
	}
	return workload.Feature{
		Args:   []string{"--token-auth-file=" + path.Join(TokenAuthFileDir, key)},
		Mounts: []workload.Mount{{Volume: "token-auth-file", Secret: t.SecretName, Dir: TokenAuthFileDir, Keys: []string{key}, User: true, Field: "tokenAuthFile.secretName"}},
	}
}

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

// ServiceAccountKeys is auth.serviceAccount toward the issuers, the shards whose tokens a
// component verifies: one --service-account-key-file per issuer, each the tls.crt, and only
// it, of its service-account Secret (the private key stays with the shard that signs with
// it). The Secrets are the server's, but of other shards: a Deployment does not wait for
// them, and a new one rolls it.
func ServiceAccountKeys(issuers []string) workload.Feature {
	var f workload.Feature
	for _, name := range issuers {
		dir := path.Join(ServiceAccountKeysDir, name)
		f.Args = append(f.Args, "--service-account-key-file="+path.Join(dir, "tls.crt"))
		// Shard names are at most 59 characters (validation), so "sa-<name>" is a DNS label.
		f.Mounts = append(f.Mounts, workload.Mount{Volume: "sa-" + name, Secret: ServiceAccountSecret(name), Dir: dir,
			Keys: []string{"tls.crt"}, Optional: true})
	}
	return f
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

// SortedIssuers sorts and deduplicates issuer names, so that the flags and mounts built from
// them are stable.
func SortedIssuers(names []string) []string {
	return workload.SortedSet(append([]string(nil), names...))
}
