package kcp

import (
	"path"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
)

// Where the optional configuration files are mounted.
const (
	// OIDCCADir is where the OIDC issuer's CA Secret is mounted.
	OIDCCADir            = mountpaths.KcpOIDCCADir
	auditPolicyDir       = mountpaths.KcpAuditDir + "/policy"
	auditWebhookDir      = mountpaths.KcpAuditDir + "/webhook"
	authorizationHookDir = mountpaths.KcpAuthorizationDir + "/webhook"
)

// Args is the kcp command line of a shard (docs/WORKLOADS.md), in one place so that a new kcp
// release is one edit: CAs, request-header authentication, serving, service accounts, shard
// URLs, admin kubeconfigs, fixed flags, the mount proxy's identity where the image's kcp has
// one, etcd, cache, the kind's own flags, then authentication, audit and authorization, then
// the user's extra arguments.
func (s Shard) Args() []string {
	spec := s.Spec
	level := int32(0)
	if spec.Logging != nil {
		level = spec.Logging.Level
	}
	args := []string{
		"start",
		"--root-ca-file=" + caDir("root") + "/tls.crt",
		"--client-ca-file=" + caDir("client") + "/tls.crt",
		"--requestheader-client-ca-file=" + caDir("requestheader-client") + "/tls.crt",
		"--requestheader-allowed-names=kcp-front-proxy," + RootShardProxyCommonName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--tls-cert-file=" + leafDir("server") + "/tls.crt",
		"--tls-private-key-file=" + leafDir("server") + "/tls.key",
		"--service-account-key-file=" + leafDir("service-account") + "/tls.crt",
		"--service-account-private-key-file=" + leafDir("service-account") + "/tls.key",
		"--service-account-lookup=false",
		"--shard-base-url=" + s.BaseURL(),
		"--shard-external-url=" + s.ExternalURL(),
		"--shard-client-cert-file=" + leafDir("client") + "/tls.crt",
		"--shard-client-key-file=" + leafDir("client") + "/tls.key",
		"--logical-cluster-admin-kubeconfig=" + KubeconfigDir(LogicalClusterAdmin) + "/" + KubeconfigKey,
		"--external-logical-cluster-admin-kubeconfig=" + KubeconfigDir(ExternalLogicalClusterAdmin) + "/" + KubeconfigKey,
		"--batteries-included=workspace-types",
		"--root-directory=",
		"--enable-leader-election=true",
		"--logging-format=json",
		"-v=" + strconv.Itoa(int(level)),
	}
	if s.Version().MountProxy() {
		// The shard forwards requests for mounted workspaces to the front proxy as this
		// identity, which the front proxy lets assert the user's X-Remote-* headers.
		args = append(args,
			"--mount-proxy-client-cert-file="+leafDir(MountsProxy)+"/tls.crt",
			"--mount-proxy-client-key-file="+leafDir(MountsProxy)+"/tls.key")
	}
	args = append(args, s.etcdArgs()...)
	if s.UsesCacheServer() {
		args = append(args, "--cache-kubeconfig="+cacheKubeDir+"/"+KubeconfigKey)
	}
	args = append(args, s.VirtualWorkspaceArgs()...)
	args = append(args, s.KindArgs...)
	args = append(args, OIDCArgs(spec.Auth)...)
	args = append(args, TokenAuthArgs(spec.Auth)...)
	// The other shards' keys, its own being verified with the flag above.
	args = append(args, ServiceAccountKeyArgs(s.serviceAccountPeers())...)
	args = append(args, auditArgs(spec.Audit)...)
	args = append(args, authorizationArgs(spec.Authorization)...)
	return append(args, spec.ExtraArgs...)
}

// VirtualWorkspaceArgs hand the shard's virtual workspaces to its standalone server, when it
// has one: kcp stops serving them, announces the server's URL, and calls it with its client
// certificate (--shard-client-cert-file, which every shard passes), verifying it with the
// server CA, or the CA bundle that holds it where the shard has one.
func (s Shard) VirtualWorkspaceArgs() []string {
	vw := s.VirtualWorkspace
	if vw == nil {
		return nil
	}
	ca := caDir("server")
	if s.ServerCABundle != "" {
		// The bundle holds the server CA and the CAs of caBundleSecretRef, which may have
		// issued the server's certificate through a certificate template's issuerRef.
		ca = caDir("bundle")
	}
	return []string{
		"--run-virtual-workspaces=false",
		"--shard-virtual-workspace-url=" + vw.URL,
		"--shard-virtual-workspace-ca-file=" + ca + "/tls.crt",
	}
}

// EtcdArgs are the flags of an external etcd, with client TLS when configured.
func EtcdArgs(etcd operatorv1alpha1.EtcdConfig) []string {
	return etcdArgs(etcd.Endpoints, etcd.Prefix, etcd.TLSConfig != nil)
}

// etcdArgs are the shard's etcd flags: its managed etcd's members, with the client
// certificate the server issues for it, else the spec's external etcd.
func (s Shard) etcdArgs() []string {
	if s.Etcd == nil {
		return EtcdArgs(s.Spec.Etcd)
	}
	return etcdArgs(s.Etcd.ClientURLs(), s.Spec.Etcd.Prefix, true)
}

// etcdArgs are kcp's etcd flags, with the client certificate mounted at EtcdTLSDir when tls.
func etcdArgs(servers []string, prefix string, tls bool) []string {
	args := []string{"--etcd-servers=" + strings.Join(servers, ",")}
	if prefix != "" {
		args = append(args, "--etcd-prefix="+prefix)
	}
	if tls {
		args = append(args,
			"--etcd-certfile="+EtcdTLSDir+"/tls.crt",
			"--etcd-keyfile="+EtcdTLSDir+"/tls.key",
			"--etcd-cafile="+EtcdTLSDir+"/ca.crt")
	}
	return args
}

// OIDCArgs are the --oidc-* flags of kcp and kcp-front-proxy, with the CA file at OIDCCADir.
func OIDCArgs(auth *operatorv1alpha1.AuthSpec) []string {
	if auth == nil || auth.OIDC == nil {
		return nil
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
	if o.CAFileRef != nil {
		args = append(args, "--oidc-ca-file="+path.Join(OIDCCADir, oidcCAKey(o)))
	}
	return sortedTail(args, 2)
}

// TokenAuthArgs are the flags of the token webhook and of the static token file, read from
// where UsersAuthMounts mounts them. Both flags exist on kcp start and kcp-front-proxy from
// kcp v0.30.0 on (upstream BuiltInAuthenticationOptions: kcp's pkg/server/options/flags.go
// allowedFlags, pkg/proxy/options/authentication.go WithWebHook and WithTokenFile).
func TokenAuthArgs(auth *operatorv1alpha1.AuthSpec) []string {
	if auth == nil {
		return nil
	}
	var args []string
	if w := auth.Webhook; w != nil {
		args = append(args, "--authentication-token-webhook-config-file="+AuthWebhookDir+"/"+KubeconfigKey)
		if w.CacheAuthenticationTTL != nil {
			args = append(args, "--authentication-token-webhook-cache-ttl="+durationString(w.CacheAuthenticationTTL))
		}
		if w.Version != "" {
			args = append(args, "--authentication-token-webhook-version="+w.Version)
		}
	}
	if t := auth.TokenAuthFile; t != nil {
		args = append(args, "--token-auth-file="+path.Join(TokenAuthFileDir, tokenAuthFileKey(t)))
	}
	return args
}

func auditArgs(audit *operatorv1alpha1.AuditSpec) []string {
	if audit == nil {
		return nil
	}
	var args []string
	if p := audit.Policy; p != nil && p.ConfigMap != nil {
		args = append(args, "--audit-policy-file="+path.Join(auditPolicyDir, p.ConfigMap.Key))
	}
	if w := audit.Webhook; w != nil {
		args = append(args, "--audit-webhook-config-file="+auditWebhookDir+"/"+KubeconfigKey)
		opt := func(flag, value string, set bool) {
			if set {
				args = append(args, flag+"="+value)
			}
		}
		opt("--audit-webhook-mode", w.Mode, w.Mode != "")
		opt("--audit-webhook-batch-buffer-size", itoa(w.BatchBufferSize), w.BatchBufferSize != 0)
		opt("--audit-webhook-batch-max-size", itoa(w.BatchMaxSize), w.BatchMaxSize != 0)
		opt("--audit-webhook-batch-max-wait", durationString(w.BatchMaxWait), w.BatchMaxWait != nil)
		opt("--audit-webhook-batch-throttle-enable", "true", w.BatchThrottleEnable)
		opt("--audit-webhook-batch-throttle-qps", w.BatchThrottleQPS, w.BatchThrottleQPS != "")
		opt("--audit-webhook-batch-throttle-burst", itoa(w.BatchThrottleBurst), w.BatchThrottleBurst != 0)
		opt("--audit-webhook-initial-backoff", durationString(w.InitialBackoff), w.InitialBackoff != nil)
		opt("--audit-webhook-truncate-enabled", "true", w.TruncateEnabled)
		opt("--audit-webhook-truncate-max-batch-size", itoa(w.TruncateMaxBatchSize), w.TruncateMaxBatchSize != 0)
		opt("--audit-webhook-truncate-max-event-size", itoa(w.TruncateMaxEventSize), w.TruncateMaxEventSize != 0)
		opt("--audit-webhook-version", w.Version, w.Version != "")
	}
	return args
}

func authorizationArgs(authz *operatorv1alpha1.AuthorizationSpec) []string {
	if authz == nil || authz.Webhook == nil {
		return nil
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
	return args
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }

func durationString(d *metav1.Duration) string {
	if d == nil {
		return ""
	}
	return d.Duration.String()
}

// sortedTail sorts args after the first n, which come from a map and must be stable.
func sortedTail(args []string, n int) []string {
	sort.Strings(args[n:])
	return args
}
