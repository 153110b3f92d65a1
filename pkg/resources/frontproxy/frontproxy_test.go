package frontproxy

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

func rootShard() *operatorv1alpha1.RootShard {
	return &operatorv1alpha1.RootShard{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{ClusterDomain: "cluster.local"},
			External:        operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 443},
		},
	}
}

func minimal() FrontProxy {
	return FrontProxy{RootShard: rootShard(), FrontProxy: &operatorv1alpha1.FrontProxy{
		ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "team-a"},
		Spec:       operatorv1alpha1.FrontProxySpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}},
	}}
}

func loaded() FrontProxy {
	f := minimal()
	f.Spec.External = &operatorv1alpha1.FrontProxyExternalConfig{Hostname: "edge.example.com", Port: 8443}
	f.Spec.Replicas = ptr.To[int32](3)
	f.Spec.Auth = &operatorv1alpha1.AuthSpec{DropGroups: []string{"system:masters", "system:kcp:admin"}, PassOnGroups: []string{"team-a"},
		OIDC: &operatorv1alpha1.OIDCConfiguration{IssuerURL: "https://dex.example.com", ClientID: "kcp", ClientSecret: "never-used",
			CAFileRef: &operatorv1alpha1.LocalDataKeyReference{Name: "dex-ca", Key: "ca.crt"}},
		ServiceAccount: &operatorv1alpha1.ServiceAccountAuthentication{Enabled: true},
		Webhook:        &operatorv1alpha1.AuthWebhookSpec{ConfigSecretName: "authn-hook", CacheAuthenticationTTL: &metav1.Duration{Duration: 30 * time.Second}, Version: "v1"},
		TokenAuthFile:  &operatorv1alpha1.TokenAuthFileSpec{SecretName: "tokens", Key: "token.csv"}}
	// Unsorted and with a duplicate, as a controller could hand them: the output is stable.
	f.ServiceAccountIssuers = []string{"shard-b", "root", "shard-a", "root"}
	f.Spec.AdditionalPathMappings = []operatorv1alpha1.PathMappingEntry{{Path: "/services/extra/", Backend: "https://extra.team-a.svc:6443",
		BackendServerCA: "/etc/extra/ca.crt"}}
	f.Spec.ExtraArgs = []string{"--v=4"}
	f.Spec.CertificateTemplates = operatorv1alpha1.CertificateTemplateMap{"server": {Spec: &operatorv1alpha1.CertificateSpecTemplate{DNSNames: []string{"edge.internal"}}}}
	f.Spec.ServiceTemplate = &operatorv1alpha1.ServiceTemplate{Spec: &operatorv1alpha1.ServiceSpecTemplate{Type: corev1.ServiceTypeLoadBalancer}}
	return f
}

func TestBuilders(t *testing.T) {
	for name, f := range map[string]FrontProxy{"minimal": minimal(), "loaded": loaded()} {
		t.Run(name, func(t *testing.T) {
			kubeconfig, err := f.DynamicKubeconfig()
			require.NoError(t, err)
			config, err := f.ConfigMap()
			require.NoError(t, err)
			objects := []any{config, kubeconfig, f.Service(), f.Deployment(nil, "hash")}
			for _, c := range f.Certificates() {
				objects = append(objects, c)
			}
			golden.Assert(t, name, objects...)
		})
	}
}

func TestServicePort(t *testing.T) {
	assert.EqualValues(t, 8443, loaded().ServicePort(), "the front proxy's own port")
	assert.EqualValues(t, 443, minimal().ServicePort(), "else the RootShard's")
	f := minimal()
	f.RootShard.Spec.External.Port = 0
	assert.EqualValues(t, 6443, f.ServicePort(), "else 6443")
}

func TestGroupsArePlainCommaSeparated(t *testing.T) {
	assert.Contains(t, loaded().Args(), "--authentication-drop-groups=system:masters,system:kcp:logical-cluster-admin,system:kcp:initializer:*,system:kcp:terminator:*,system:kcp:admin")
	assert.Contains(t, loaded().Args(), "--authentication-pass-on-groups=team-a")
}

// TestDropGroupsKeepTheDefaults: --authentication-drop-groups replaces kcp-front-proxy's
// default list, so a user's dropGroups are added to the release's defaults, never put in
// their place; without dropGroups the flag is left out and the defaults apply as they are.
func TestDropGroupsKeepTheDefaults(t *testing.T) {
	dropFlag := func(tag string, groups ...string) []string {
		f := minimal()
		f.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: tag}
		if groups != nil {
			f.Spec.Auth = &operatorv1alpha1.AuthSpec{DropGroups: groups}
		}
		var out []string
		for _, a := range f.Args() {
			if strings.HasPrefix(a, "--authentication-drop-groups") {
				out = append(out, a)
			}
		}
		return out
	}
	tests := []struct {
		name, tag string
		groups    []string
		want      []string
	}{
		{name: "no dropGroups: the release's defaults", tag: "v0.32.3"},
		{name: "a group of the author's, v0.31", tag: "v0.31.6", groups: []string{"contractors"},
			want: []string{"--authentication-drop-groups=system:masters,system:kcp:logical-cluster-admin,contractors"}},
		{name: "a group of the author's, v0.32", tag: "v0.32.3", groups: []string{"contractors"},
			want: []string{"--authentication-drop-groups=system:masters,system:kcp:logical-cluster-admin,system:kcp:initializer:*,system:kcp:terminator:*,contractors"}},
		{name: "a default named again is named once", tag: "v0.30.0", groups: []string{"system:masters", "contractors"},
			want: []string{"--authentication-drop-groups=system:masters,system:kcp:logical-cluster-admin,contractors"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, dropFlag(tc.tag, tc.groups...))
		})
	}
}

// TestServiceAccountAuthentication: with auth.serviceAccount enabled, the front proxy verifies
// the tokens of the root shard and of every shard, with lookup off (its ServiceAccount getter
// only reads the root shard); without it, it verifies none, as before.
func TestServiceAccountAuthentication(t *testing.T) {
	args := loaded().Args()
	assert.Equal(t, []string{
		"--service-account-lookup=false",
		"--service-account-key-file=/etc/kcp/tls/service-account-keys/root/tls.crt",
		"--service-account-key-file=/etc/kcp/tls/service-account-keys/shard-a/tls.crt",
		"--service-account-key-file=/etc/kcp/tls/service-account-keys/shard-b/tls.crt",
	}, withPrefix(args, "--service-account-"))
	assert.Equal(t, []string{"root-service-account", "shard-a-service-account", "shard-b-service-account"}, workload.Secrets(loaded().Mounts(), workload.OptionalSecret))

	for name, f := range map[string]FrontProxy{"absent": minimal(), "false": loaded()} {
		if name == "false" {
			f.Spec.Auth.ServiceAccount.Enabled = false
		}
		f.ServiceAccountIssuers = []string{"root", "shard-a"}
		assert.Empty(t, withPrefix(f.Args(), "--service-account-"), name)
		assert.Empty(t, workload.Secrets(f.Mounts(), workload.OptionalSecret), name)
		for _, v := range f.Deployment(nil, "h").Spec.Template.Spec.Volumes {
			assert.False(t, strings.HasPrefix(*v.Name, "sa-"), "%s: %s", name, *v.Name)
		}
	}
}

// TestTokenAuthentication: the token webhook and the static token file become their flags,
// read from their Secrets mounted with only the key they need; the OIDC client secret
// appears nowhere.
func TestTokenAuthentication(t *testing.T) {
	f := loaded()
	args := f.Args()
	for _, want := range []string{
		"--authentication-token-webhook-config-file=/etc/kcp/authentication/webhook/kubeconfig",
		"--authentication-token-webhook-cache-ttl=30s",
		"--authentication-token-webhook-version=v1",
		"--token-auth-file=/etc/kcp/authentication/token/token.csv",
	} {
		assert.Contains(t, args, want)
	}
	assert.NotContains(t, strings.Join(args, " "), "never-used")
	assert.ElementsMatch(t, []string{"dex-ca", "authn-hook", "tokens"}, f.UsersSecrets())
	items := map[string][]string{}
	for _, v := range f.Deployment(nil, "h").Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			for _, it := range v.Secret.Items {
				items[*v.Secret.SecretName] = append(items[*v.Secret.SecretName], *it.Key)
			}
		}
	}
	assert.Equal(t, []string{"kubeconfig"}, items["authn-hook"])
	assert.Equal(t, []string{"token.csv"}, items["tokens"])
	assert.Equal(t, []string{"ca.crt"}, items["dex-ca"])
}

func withPrefix(args []string, prefix string) []string {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			out = append(out, a)
		}
	}
	return out
}

// TestExtraArgsComeLastAsWritten: kcp-operator's users write a flag and its value as two
// entries, which must reach kcp-front-proxy unchanged, in order and after the server's flags.
func TestExtraArgsComeLastAsWritten(t *testing.T) {
	f := loaded()
	extra := []string{"--authentication-drop-groups", "system:masters", "--v=6"}
	f.Spec.ExtraArgs = extra
	args := f.Args()
	require.Greater(t, len(args), len(extra))
	assert.Equal(t, extra, args[len(args)-len(extra):])
}

// TestDeprecatedExternalHostname: kcp-operator's deprecated spec.externalHostname is read as
// external.hostname, by the accessor and the serving certificate built from it.
func TestDeprecatedExternalHostname(t *testing.T) {
	f := minimal()
	assert.Empty(t, f.ExternalHostname(), "none of its own: the RootShard's applies")
	f.Spec.ExternalHostname = "old.example.com"
	assert.Equal(t, "old.example.com", f.ExternalHostname())
	assert.Contains(t, f.Leaves()[0].DNSNames, "old.example.com", "the serving certificate names it")
	f.Spec.External = &operatorv1alpha1.FrontProxyExternalConfig{Hostname: "new.example.com"}
	assert.Equal(t, "new.example.com", f.ExternalHostname(), "external.hostname wins (validation refuses both)")
}

// TestDeprecatedExternalHostnameWithAPort: host:port, as kcp-operator parses it, is the
// hostname and the port, unless external.port is set, which wins as in kcp-operator.
func TestDeprecatedExternalHostnameWithAPort(t *testing.T) {
	f := minimal()
	f.Spec.ExternalHostname = "old.example.com:8443"
	assert.Equal(t, "old.example.com", f.ExternalHostname())
	assert.EqualValues(t, 8443, f.ServicePort(), "the port of externalHostname, before the RootShard's 443")
	assert.Contains(t, f.Leaves()[0].DNSNames, "old.example.com", "the serving certificate names the host alone")
	assert.NotContains(t, f.Leaves()[0].DNSNames, "old.example.com:8443")
	f.Spec.External = &operatorv1alpha1.FrontProxyExternalConfig{Port: 9443}
	assert.EqualValues(t, 9443, f.ServicePort(), "external.port wins")
}

// bundled is a front proxy whose serving certificate comes from a public issuer, with CA
// bundles of its own, under a RootShard with a private address.
func bundled() FrontProxy {
	f := minimal()
	f.RootShard.Spec.External.PrivateHostname = "kcp.internal.example.com"
	f.Spec.External = &operatorv1alpha1.FrontProxyExternalConfig{Hostname: "edge.example.com", PrivateHostname: "edge.internal.example.com"}
	f.Spec.CABundleSecretRef = &corev1.LocalObjectReference{Name: "public-ca"}
	f.Spec.ClientCABundleRef = &corev1.LocalObjectReference{Name: "partner-ca"}
	f.Spec.CertificateTemplates = operatorv1alpha1.CertificateTemplateMap{"server": {Spec: &operatorv1alpha1.CertificateSpecTemplate{
		IssuerRef: &operatorv1alpha1.ObjectReference{Name: "letsencrypt", Kind: "ClusterIssuer", Group: "cert-manager.io"},
		DNSNames:  []string{"edge.example.com"},
	}}}
	return f
}

// TestBundlesGolden pins what caBundleSecretRef, clientCABundleRef, a public serving issuer
// and the private addresses change.
func TestBundlesGolden(t *testing.T) {
	f := bundled()
	config, err := f.ConfigMap()
	require.NoError(t, err)
	objects := []any{config, f.Deployment(nil, "hash"),
		f.MergedClientCA([]byte("ROOT-MERGED-CLIENT-CA\n"), []byte("PARTNER-CA")),
		f.MergedCABundle([]byte("ROOT-MERGED-CA-BUNDLE"), []byte("PUBLIC-CA\n"))}
	for _, c := range f.Certificates() {
		objects = append(objects, c)
	}
	golden.Assert(t, "bundles", objects...)
}

// TestCABundleRefsMounts checks which Secrets the front proxy trusts clients and the root
// shard by, as kcp-operator's FrontProxy does.
func TestCABundleRefsMounts(t *testing.T) {
	ref := &corev1.LocalObjectReference{Name: "x"}
	tests := []struct {
		name                     string
		caBundle, clientCABundle *corev1.LocalObjectReference
		want, notWant            []string
	}{
		{name: "none", want: []string{"root-merged-client-ca", "root-server-ca"}, notWant: []string{"root-edge-merged-client-ca", "root-edge-merged-ca-bundle"}},
		{name: "clientCABundleRef", clientCABundle: ref, want: []string{"root-edge-merged-client-ca", "root-server-ca"}, notWant: []string{"root-merged-client-ca"}},
		{name: "caBundleSecretRef", caBundle: ref, want: []string{"root-merged-client-ca", "root-edge-merged-ca-bundle"}, notWant: []string{"root-server-ca"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := minimal()
			f.Spec.CABundleSecretRef, f.Spec.ClientCABundleRef = tt.caBundle, tt.clientCABundle
			for _, name := range tt.want {
				assert.Contains(t, workload.Secrets(f.Mounts(), workload.WaitedSecret), name)
			}
			for _, name := range tt.notWant {
				assert.NotContains(t, workload.Secrets(f.Mounts(), workload.WaitedSecret), name)
			}
			assert.Equal(t, f.BundleSources() != nil, tt.caBundle != nil || tt.clientCABundle != nil, "the user's Secret rebuilds the bundle")
		})
	}
}

// TestServerCertificateNamesPrivateHostnames checks that the serving certificate covers the
// private addresses internal components use.
func TestServerCertificateNamesPrivateHostnames(t *testing.T) {
	f := minimal()
	f.RootShard.Spec.External.PrivateHostname = "kcp.internal"
	f.Spec.External = &operatorv1alpha1.FrontProxyExternalConfig{PrivateHostname: "edge.internal"}
	server := f.Certificates()[0]
	assert.Contains(t, server.Spec.DNSNames, "kcp.internal", "the RootShard's private hostname, as in kcp-operator")
	assert.Contains(t, server.Spec.DNSNames, "edge.internal")
}

// TestVersionGoldens renders the front proxy's Deployment at each kcp minor kcp-setups
// supports, so that a review sees the version gates: the requestheader CA and flags that let
// the shards' mount proxies through from v0.31.6 and v0.32.3.
func TestVersionGoldens(t *testing.T) {
	for minor, tag := range map[string]string{"v0.30": "v0.30.0", "v0.31": "v0.31.6", "v0.32": "v0.32.3"} {
		t.Run(minor, func(t *testing.T) {
			f := minimal()
			f.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: tag}
			golden.Assert(t, "minimal-"+minor, f.Deployment(nil, "hash"))
		})
	}
}

// TestVirtualWorkspaceGolden renders the path mappings of a front proxy whose root shard's
// virtual workspaces a VirtualWorkspace serves: /services/ goes to its Service, with the same
// server CA and request-header identity as /clusters/, which still goes to the root shard.
func TestVirtualWorkspaceGolden(t *testing.T) {
	f := minimal()
	f.ServicesBackend = "https://vw-virtual-workspace.team-a.svc.cluster.local:6443"
	config, err := f.ConfigMap()
	require.NoError(t, err)
	mapping := config.Data[MappingKey]
	assert.Contains(t, mapping, "backend: https://vw-virtual-workspace.team-a.svc.cluster.local:6443\n  backend_server_ca: /etc/kcp-front-proxy/ca/server/tls.crt\n  path: /services/")
	assert.Contains(t, mapping, "backend: https://root-kcp.team-a.svc.cluster.local:6443\n  backend_server_ca: /etc/kcp-front-proxy/ca/server/tls.crt\n  path: /clusters/")
	golden.Assert(t, "virtual-workspace", config)
}

// TestVirtualWorkspaceMapping renders a path mapping to a VirtualWorkspace of the root shard,
// as kcp-operator's "access" sample routes /services/access: its Service, with the server CA
// and request-header identity of the built-in /services/ mapping. A mapping to a
// VirtualWorkspace the controller did not resolve is left out, and an author's plain mapping
// keeps its own backend and files.
func TestVirtualWorkspaceMapping(t *testing.T) {
	f := minimal()
	f.ServicesBackend = "https://vw-virtual-workspace.team-a.svc.cluster.local:6443"
	f.MappedVirtualWorkspaces = map[string]string{"access": "https://access-virtual-workspace.team-a.svc.cluster.local:6443"}
	f.Spec.AdditionalPathMappings = []operatorv1alpha1.PathMappingEntry{
		{Path: "/services/access", VirtualWorkspaceRef: &corev1.LocalObjectReference{Name: "access"}},
		{Path: "/services/missing", VirtualWorkspaceRef: &corev1.LocalObjectReference{Name: "missing"}},
		{Path: "/services/extra/", Backend: "https://extra.team-a.svc:6443", BackendServerCA: "/var/extra/ca.crt"},
	}
	config, err := f.ConfigMap()
	require.NoError(t, err)
	var mappings []pathMapping
	require.NoError(t, yaml.Unmarshal([]byte(config.Data[MappingKey]), &mappings))
	byPath := map[string]pathMapping{}
	for _, m := range mappings {
		byPath[m.Path] = m
	}
	services := byPath["/services/"]
	want := services
	want.Path, want.Backend = "/services/access", "https://access-virtual-workspace.team-a.svc.cluster.local:6443"
	assert.Equal(t, want, byPath["/services/access"], "the VirtualWorkspace's Service, with /services/'s CA and identity")
	assert.Equal(t, requestHeaderDir+"/tls.crt", services.ProxyClientCert, "the request-header identity, not the system:masters kubeconfig client")
	assert.NotContains(t, byPath, "/services/missing", "a VirtualWorkspace that is not resolved is left out")
	assert.Equal(t, pathMapping{Path: "/services/extra/", Backend: "https://extra.team-a.svc:6443", BackendServerCA: "/var/extra/ca.crt"},
		byPath["/services/extra/"], "a plain mapping keeps the author's backend and files only")
	assert.Len(t, mappings, 4)
	golden.Assert(t, "virtual-workspace-mapping", config)
}
