package flagtable

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
	"github.com/kcp-setups/apiserver/pkg/resources/virtualworkspace"
)

// tags are the releases the builders are checked at: each gate's either side, and a tag
// that names no release.
var tags = []string{"v0.30.0", "v0.30.2", "v0.31.0", "v0.31.2", "v0.31.6", "v0.32.0", "v0.32.3", "main"}

// rootShard sets every field that adds a flag to a shard, so that the table check sees them.
func rootShard(tag string) *operatorv1alpha1.RootShard {
	minute := metav1.Duration{Duration: time.Minute}
	return &operatorv1alpha1.RootShard{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{
				ComponentSpec: operatorv1alpha1.ComponentSpec{Image: &operatorv1alpha1.ImageSpec{Tag: tag}},
				Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}, Prefix: "/kcp",
					TLSConfig: &operatorv1alpha1.EtcdTLSConfig{SecretRef: corev1.LocalObjectReference{Name: "etcd-client"}}},
				Auth: &operatorv1alpha1.AuthSpec{OIDC: &operatorv1alpha1.OIDCConfiguration{IssuerURL: "https://dex.example.com", ClientID: "kcp",
					GroupsClaim: "groups", UsernameClaim: "email", GroupsPrefix: "oidc:", UsernamePrefix: "oidc:",
					CAFileRef: &operatorv1alpha1.LocalDataKeyReference{Name: "dex-ca", Key: "ca.crt"}},
					ServiceAccount: &operatorv1alpha1.ServiceAccountAuthentication{Enabled: true},
					Webhook:        &operatorv1alpha1.AuthWebhookSpec{ConfigSecretName: "authn-hook", CacheAuthenticationTTL: &minute, Version: "v1"},
					TokenAuthFile:  &operatorv1alpha1.TokenAuthFileSpec{SecretName: "tokens", Key: "token.csv"}},
				Audit: &operatorv1alpha1.AuditSpec{
					Policy:  &operatorv1alpha1.AuditPolicySpec{ConfigMap: &operatorv1alpha1.LocalDataKeyReference{Name: "audit", Key: "policy.yaml"}},
					Webhook: &operatorv1alpha1.AuditWebhookSpec{ConfigSecretName: "audit-hook", Mode: "batch", BatchMaxWait: &minute, BatchThrottleQPS: "10"},
				},
				Authorization: &operatorv1alpha1.AuthorizationSpec{Webhook: &operatorv1alpha1.AuthorizationWebhookSpec{ConfigSecretName: "authz",
					AllowPaths: []string{"/healthz"}, CacheAuthorizedTTL: &minute, CacheUnauthorizedTTL: &minute, Version: "v1"}},
			},
			External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 443},
		},
	}
}

func shardOf(tag string, cache bool) *operatorv1alpha1.Shard {
	rs := rootShard(tag)
	s := &operatorv1alpha1.Shard{
		ObjectMeta: metav1.ObjectMeta{Name: "shard-1", Namespace: "team-a"},
		Spec: operatorv1alpha1.ShardSpec{CommonShardSpec: rs.Spec.CommonShardSpec,
			RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}},
	}
	if cache {
		s.Spec.Cache = &operatorv1alpha1.CacheConfig{Reference: &corev1.LocalObjectReference{Name: "cache"}}
	}
	return s
}

func frontProxyOf(tag string) frontproxy.FrontProxy {
	rs := rootShard(tag)
	return frontproxy.FrontProxy{RootShard: rs, FrontProxy: &operatorv1alpha1.FrontProxy{
		ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "team-a"},
		Spec: operatorv1alpha1.FrontProxySpec{
			ComponentSpec: operatorv1alpha1.ComponentSpec{Image: &operatorv1alpha1.ImageSpec{Tag: tag}},
			RootShard:     operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}},
			Auth: &operatorv1alpha1.AuthSpec{DropGroups: []string{"system:masters"}, PassOnGroups: []string{"team-*"},
				OIDC: rs.Spec.Auth.OIDC, ServiceAccount: rs.Spec.Auth.ServiceAccount, Webhook: rs.Spec.Auth.Webhook,
				TokenAuthFile: rs.Spec.Auth.TokenAuthFile},
		},
	}, ServiceAccountIssuers: issuers}
}

// rootShardProxyOf is the internal front proxy of the root shard at tag, with spec.proxy's
// logging set; its image is the root shard's.
func rootShardProxyOf(tag string) frontproxy.RootShardProxy {
	rs := rootShard(tag)
	rs.Spec.Proxy = &operatorv1alpha1.RootShardProxySpec{ComponentSpec: operatorv1alpha1.ComponentSpec{
		Logging: &operatorv1alpha1.LoggingSpec{Level: 2}}}
	return frontproxy.RootShardProxy{RootShard: rs}
}

func cacheServerOf(tag string, etcd bool) cacheserver.CacheServer {
	c := cacheserver.CacheServer{CacheServer: &operatorv1alpha1.CacheServer{
		ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "team-a"},
		Spec: operatorv1alpha1.CacheServerSpec{ComponentSpec: operatorv1alpha1.ComponentSpec{
			Image: &operatorv1alpha1.ImageSpec{Tag: tag}}},
	}}
	if etcd {
		c.Spec.Etcd = &operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}, Prefix: "/cache",
			TLSConfig: &operatorv1alpha1.EtcdTLSConfig{SecretRef: corev1.LocalObjectReference{Name: "etcd-client"}}}
	}
	return c
}

// virtualWorkspaceOf is kcp's own virtual-workspaces server at tag, next to the root shard or,
// with cache, next to a shard with a cache server.
func virtualWorkspaceOf(tag string, cache bool) virtualworkspace.VirtualWorkspace {
	vw := &operatorv1alpha1.VirtualWorkspace{
		ObjectMeta: metav1.ObjectMeta{Name: "vw", Namespace: "team-a"},
		Spec: operatorv1alpha1.VirtualWorkspaceSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "vw.example.com"},
			ComponentSpec: operatorv1alpha1.ComponentSpec{Logging: &operatorv1alpha1.LoggingSpec{Level: 2}}},
	}
	rs := rootShard(tag)
	if !cache {
		vw.Spec.Target.RootShardRef = &corev1.LocalObjectReference{Name: rs.Name}
		return virtualworkspace.VirtualWorkspace{VirtualWorkspace: vw, Target: rootshard.Server(rs)}
	}
	s := shardOf(tag, true)
	vw.Spec.Target.ShardRef = &corev1.LocalObjectReference{Name: s.Name}
	return virtualworkspace.VirtualWorkspace{VirtualWorkspace: vw, Target: shard.Server(s, rs)}
}

// thirdPartyOf is a third-party server next to the root shard of tag.
func thirdPartyOf(tag string) virtualworkspace.VirtualWorkspace {
	v := virtualWorkspaceOf(tag, false)
	v.Spec.Command = []string{"/access-vw"}
	return v
}

// issuers are the shards whose service-account keys a component verifies tokens with.
var issuers = []string{"root", "shard-1"}

// commandLine is a component's command line as its Deployment runs it.
type commandLine struct {
	name, component string
	args            []string
}

// commandLines builds every kind at tag, each in the variants that emit different flags.
func commandLines(tag string) []commandLine {
	rs := rootShard(tag)
	plain := rootShard(tag)
	plain.Spec.Auth, plain.Spec.Audit, plain.Spec.Authorization, plain.Spec.Etcd.TLSConfig = nil, nil, nil, nil
	ordered := rootShard(tag)
	ordered.Spec.Authorization = &operatorv1alpha1.AuthorizationSpec{AllowPaths: []string{"/healthz", "/metrics"},
		Order: []string{"AlwaysAllowPaths", "RBAC"}}
	out := []commandLine{
		{"root shard", kcpStart, rootshard.Server(rs).Deployment(nil, "h").Spec.Template.Spec.Containers[0].Args},
		{"plain root shard", kcpStart, rootshard.Server(plain).Deployment(nil, "h").Spec.Template.Spec.Containers[0].Args},
		{"root shard with authorizers in order", kcpStart, rootshard.Server(ordered).Deployment(nil, "h").Spec.Template.Spec.Containers[0].Args},
		{"shard", kcpStart, shard.Server(shardOf(tag, false), rs).Deployment(nil, "h").Spec.Template.Spec.Containers[0].Args},
		{"shard with a cache server", kcpStart, shard.Server(shardOf(tag, true), rs).Deployment(nil, "h").Spec.Template.Spec.Containers[0].Args},
		{"front proxy", frontProxy, frontProxyOf(tag).Deployment(nil, "h").Spec.Template.Spec.Containers[0].Args},
		{"root shard proxy", frontProxy, rootShardProxyOf(tag).Deployment(nil, "h").Spec.Template.Spec.Containers[0].Args},
		{"cache server", cacheServer, cacheServerOf(tag, false).Deployment(nil, "h").Spec.Template.Spec.Containers[0].Args},
	}
	managed := shardOf(tag, false)
	managed.Spec.Etcd = operatorv1alpha1.EtcdConfig{Prefix: "/kcp", Managed: &operatorv1alpha1.ManagedEtcd{}}
	out = append(out,
		commandLine{"shard with a managed etcd", kcpStart, shard.Server(managed, rs).Deployment(nil, "h").Spec.Template.Spec.Containers[0].Args},
		commandLine{"managed etcd member", etcdMember, shard.Etcd(managed, rs).StatefulSet("h").Spec.Template.Spec.Containers[0].Args})
	withVW := rootshard.Server(rs)
	withVW.VirtualWorkspace = virtualWorkspaceOf(tag, false).Endpoint()
	out = append(out,
		commandLine{"root shard with a virtual workspace", kcpStart, withVW.Deployment(nil, "h").Spec.Template.Spec.Containers[0].Args},
		commandLine{"virtual workspace", virtualWorkspaces, virtualWorkspaceOf(tag, false).Deployment(nil, "h").Spec.Template.Spec.Containers[0].Args},
		commandLine{"virtual workspace with a cache server", virtualWorkspaces, virtualWorkspaceOf(tag, true).Args()},
		commandLine{"third-party virtual workspace", virtualWorkspaces, thirdPartyOf(tag).Args()})
	// Validation refuses an external etcd where the cache server has no --etcd-* flags.
	if kcpversion.FromTag(tag).CacheServerEtcd() {
		out = append(out, commandLine{"cache server with etcd", cacheServer, cacheServerOf(tag, true).Deployment(nil, "h").Spec.Template.Spec.Containers[0].Args})
	}
	return out
}

// flagName is a command-line argument's flag, without its value.
func flagName(arg string) string {
	name, _, _ := strings.Cut(arg, "=")
	return name
}

func TestEveryEmittedFlagIsDefinedByTheImagesKcp(t *testing.T) {
	for _, tag := range tags {
		v := kcpversion.FromTag(tag)
		for _, cl := range commandLines(tag) {
			t.Run(tag+"/"+cl.name, func(t *testing.T) {
				args := cl.args
				if cl.component == kcpStart {
					require.Equal(t, "start", args[0])
					args = args[1:]
				}
				require.NotEmpty(t, args)
				for _, arg := range args {
					name := flagName(arg)
					def, ok := flags[cl.component][name]
					if !assert.True(t, ok, "%s emits %s, which the flag table lacks: add it with the kcp file that defines it", cl.component, name) {
						continue
					}
					defined := false
					for _, s := range def.spans {
						defined = defined || s.has(v)
					}
					assert.True(t, defined, "%s of kcp %s has no %s (%s)", cl.component, v, name, def.source)
				}
			})
		}
	}
}

// TestTheTableIsExercised keeps the table honest: each of its flags is emitted at some
// release, so that a flag the builders stopped emitting leaves it.
func TestTheTableIsExercised(t *testing.T) {
	seen := map[string]map[string]bool{}
	for _, tag := range tags {
		for _, cl := range commandLines(tag) {
			if seen[cl.component] == nil {
				seen[cl.component] = map[string]bool{}
			}
			for _, arg := range cl.args {
				seen[cl.component][flagName(arg)] = true
			}
		}
	}
	for component, defs := range flags {
		for name, def := range defs {
			assert.True(t, seen[component][name], "%s %s is in the table but never emitted", component, name)
			assert.NotEmpty(t, def.source, "%s %s cites no source", component, name)
		}
	}
}

// TestGatedFlags checks each gate from both sides, by what the builders emit.
func TestGatedFlags(t *testing.T) {
	has := func(args []string, flag string) bool {
		for _, a := range args {
			if flagName(a) == flag {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		tag                                               string
		cacheClientCA, cacheLogging, hostname, mountProxy bool
		// The virtual-workspaces server's --logging-format follows the cache server's.
		vwShardExternalURL, vwExternalAdmin bool
	}{
		{"v0.30.0", false, false, true, false, true, false},
		{"v0.30.2", true, false, true, false, true, false},
		{"v0.31.0", true, true, false, false, false, false},
		{"v0.31.2", true, true, false, false, false, true},
		{"v0.31.6", true, true, false, true, false, true},
		{"v0.32.0", true, true, false, false, false, true},
		{"v0.32.3", true, true, false, true, false, true},
		{"main", true, true, false, true, false, true},
	} {
		rs := rootShard(tc.tag)
		cache := cacheServerOf(tc.tag, false).Args()
		assert.Equal(t, tc.cacheClientCA, has(cache, "--client-ca-file"), "%s cache server --client-ca-file", tc.tag)
		assert.Equal(t, tc.cacheLogging, has(cache, "--logging-format"), "%s cache server --logging-format", tc.tag)
		shardArgs := shard.Server(shardOf(tc.tag, false), rs).Args()
		assert.Equal(t, tc.hostname, has(shardArgs, "--external-hostname"), "%s shard --external-hostname", tc.tag)
		for name, args := range map[string][]string{"shard": shardArgs, "root shard": rootshard.Server(rs).Args()} {
			assert.Equal(t, tc.mountProxy, has(args, "--mount-proxy-client-cert-file"), "%s %s --mount-proxy-client-cert-file", tc.tag, name)
			assert.Equal(t, tc.mountProxy, has(args, "--mount-proxy-client-key-file"), "%s %s --mount-proxy-client-key-file", tc.tag, name)
		}
		vw := virtualWorkspaceOf(tc.tag, false).Args()
		assert.Equal(t, tc.vwShardExternalURL, has(vw, "--shard-external-url"), "%s virtual workspace --shard-external-url", tc.tag)
		assert.Equal(t, tc.vwExternalAdmin, has(vw, "--external-logical-cluster-admin-kubeconfig"), "%s virtual workspace --external-logical-cluster-admin-kubeconfig", tc.tag)
		assert.Equal(t, tc.cacheLogging, has(vw, "--logging-format"), "%s virtual workspace --logging-format", tc.tag)
		fp := frontProxyOf(tc.tag).Args()
		assert.Equal(t, tc.mountProxy, has(fp, "--requestheader-client-ca-file"), "%s front proxy --requestheader-client-ca-file", tc.tag)
		assert.Equal(t, tc.mountProxy, has(fp, "--requestheader-allowed-names"), "%s front proxy --requestheader-allowed-names", tc.tag)
		rsp := rootShardProxyOf(tc.tag).Args()
		assert.Equal(t, tc.mountProxy, has(rsp, "--requestheader-client-ca-file"), "%s root shard proxy --requestheader-client-ca-file", tc.tag)
		assert.Equal(t, tc.mountProxy, has(rsp, "--requestheader-allowed-names"), "%s root shard proxy --requestheader-allowed-names", tc.tag)
	}
}
