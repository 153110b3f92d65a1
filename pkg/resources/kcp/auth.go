package kcp

import (
	"path"
	"sort"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
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

// AuthenticationSettings are the settings of auth that authenticate with a Secret of the
// user's, each one function from the spec to its flags and mounts: OIDC, the token webhook
// and the static token file. kcp's flags, kcp-front-proxy's, the watch of users' Secrets and
// the admission check of the author's right to read them all come from Authentication, so
// that a setting added here reaches every one of them.
var AuthenticationSettings = []func(*operatorv1alpha1.AuthSpec) workload.Feature{OIDC, TokenWebhook, TokenFile}

// Authentication is auth's AuthenticationSettings together, in order: their flags, then
// their mounts.
func Authentication(auth *operatorv1alpha1.AuthSpec) workload.Feature {
	fs := make([]workload.Feature, 0, len(AuthenticationSettings))
	for _, setting := range AuthenticationSettings {
		fs = append(fs, setting(auth))
	}
	return workload.Features(fs...)
}

// OIDC is auth.oidc of kcp and kcp-front-proxy: the --oidc-* flags, and the issuer's CA
// Secret of caFileRef, the user's, with only the key --oidc-ca-file reads. The key's default
// is the API's (SetDefaults_OIDCConfiguration): the objects the builders see are defaulted.
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
		args = append(args, "--oidc-ca-file="+path.Join(OIDCCADir, ref.Key))
		f.Mounts = []workload.Mount{{Volume: "oidc-ca", Secret: ref.Name, Dir: OIDCCADir, Keys: []string{ref.Key}, User: true, Field: "oidc.caFileRef"}}
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
// WithTokenFile, as TokenWebhook's flags), whose default is the API's
// (SetDefaults_TokenAuthFileSpec).
func TokenFile(auth *operatorv1alpha1.AuthSpec) workload.Feature {
	if auth == nil || auth.TokenAuthFile == nil {
		return workload.Feature{}
	}
	t := auth.TokenAuthFile
	return workload.Feature{
		Args:   []string{"--token-auth-file=" + path.Join(TokenAuthFileDir, t.Key)},
		Mounts: []workload.Mount{{Volume: "token-auth-file", Secret: t.SecretName, Dir: TokenAuthFileDir, Keys: []string{t.Key}, User: true, Field: "tokenAuthFile.secretName"}},
	}
}

// ServiceAccountSecret is the Secret cert-manager writes a root shard's or a shard's
// service-account key pair to, slot 0 of its signing leaf (<shard>-service-account-next is
// slot 1, pki.SigningSlots): the shard signs tokens with tls.key, others verify them with
// tls.crt.
func ServiceAccountSecret(shard string) string { return shard + "-service-account" }

// ServiceAccountTrustSecret is the Secret of the public certificates of a shard's live
// signing leaves, in slot order (pki.SigningSlots), which the controllers write from the
// start and the components mount from the first rotation of the service-account CA on
// (ServiceAccountKeysSecret): while it rotates, it holds the old key and the new one, which
// exists before the shard signs with it.
func ServiceAccountTrustSecret(shard string) string {
	return ServiceAccountSecret(shard) + pki.TrustSuffix
}

// ServiceAccountKeysSecret is the Secret whose tls.crt the components verify the tokens of
// shard, of the RootShard rs, with: its signing leaf's until rs's service-account CA is first
// rotated, then <shard>-service-account-trust, as pki.TrustSecret does for a CA.
func ServiceAccountKeysSecret(rs *operatorv1alpha1.RootShard, shard string) string {
	if pki.RotationOf(rs.Status.Rotations, pki.Authority(pki.ServiceAccountCA)) == nil {
		return ServiceAccountSecret(shard)
	}
	return ServiceAccountTrustSecret(shard)
}

// ServiceAccountEnabled reports whether auth.serviceAccount.enabled is set: the component then
// verifies the tokens of every shard of its RootShard, not only its own (a shard) or none (a
// front proxy).
func ServiceAccountEnabled(auth *operatorv1alpha1.AuthSpec) bool {
	return auth != nil && auth.ServiceAccount != nil && auth.ServiceAccount.Enabled
}

// ServiceAccountKeys is auth.serviceAccount toward the issuers, the shards of rs whose tokens
// a component verifies: one --service-account-key-file per issuer, each the tls.crt, and
// only it, of its ServiceAccountKeysSecret (the private key stays with the shard that signs
// with it). The Secrets are the server's, but of other shards: a Deployment does not wait
// for them, and a new one rolls it.
func ServiceAccountKeys(rs *operatorv1alpha1.RootShard, issuers []string) workload.Feature {
	var f workload.Feature
	for _, name := range issuers {
		dir := path.Join(ServiceAccountKeysDir, name)
		f.Args = append(f.Args, "--service-account-key-file="+path.Join(dir, "tls.crt"))
		// Shard names are at most 59 characters (validation), so "sa-<name>" is a DNS label.
		f.Mounts = append(f.Mounts, workload.Mount{Volume: "sa-" + name, Secret: ServiceAccountKeysSecret(rs, name), Dir: dir,
			Keys: []string{"tls.crt"}, Optional: true})
	}
	return f
}

// ownServiceAccountTrust is, from the first rotation of the service-account CA on, the
// server's own <name>-service-account-trust as one more --service-account-key-file next to
// its signing leaf's: the key it signed with before the rotation issued its leaf again stays
// verifiable until Complete, and its current key is verified even before the controller
// wrote it there.
func (s Server) ownServiceAccountTrust() workload.Feature {
	if pki.RotationOf(s.RootShard.Status.Rotations, pki.Authority(pki.ServiceAccountCA)) == nil {
		return workload.Feature{}
	}
	dir := leafDir("service-account-trust")
	return workload.Feature{
		Args:   []string{"--service-account-key-file=" + dir + "/tls.crt"},
		Mounts: []workload.Mount{{Volume: "service-account-trust", Secret: ServiceAccountTrustSecret(s.Name), Dir: dir, Keys: onlyCert}},
	}
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
