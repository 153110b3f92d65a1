package shard

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

func rootShard() *operatorv1alpha1.RootShard {
	return &operatorv1alpha1.RootShard{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{ClusterDomain: "cluster.local",
				Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}},
			External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 443},
		},
	}
}

func minimalShard() *operatorv1alpha1.Shard {
	return &operatorv1alpha1.Shard{
		ObjectMeta: metav1.ObjectMeta{Name: "shard-1", Namespace: "team-a"},
		Spec: operatorv1alpha1.ShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{ClusterDomain: "cluster.local",
				Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd-shard:2379"}}},
			RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}},
		},
	}
}

func loadedShard() *operatorv1alpha1.Shard {
	s := minimalShard()
	s.Spec.ShardBaseURL = "https://shard-1.shards.example.com:6443"
	s.Spec.Cache = &operatorv1alpha1.CacheConfig{Reference: &corev1.LocalObjectReference{Name: "cache"}}
	s.Spec.Replicas = ptr.To[int32](4)
	s.Spec.ExtraArgs = []string{"--v=3"}
	s.Spec.Etcd.TLSConfig = &operatorv1alpha1.EtcdTLSConfig{SecretRef: corev1.LocalObjectReference{Name: "etcd-client"}}
	s.Spec.CertificateTemplates = operatorv1alpha1.CertificateTemplateMap{
		"server": {Spec: &operatorv1alpha1.CertificateSpecTemplate{DNSNames: []string{"shard-1.internal"}}},
	}
	s.Spec.Auth = &operatorv1alpha1.AuthSpec{
		ServiceAccount: &operatorv1alpha1.ServiceAccountAuthentication{Enabled: true},
		Webhook:        &operatorv1alpha1.AuthWebhookSpec{ConfigSecretName: "authn-hook", Version: "v1beta1"},
		TokenAuthFile:  &operatorv1alpha1.TokenAuthFileSpec{SecretName: "tokens", Key: "tokens.csv"},
		DropGroups:     []string{"system:masters"},
	}
	return s
}

// issuers are the shards of the RootShard whose service-account Secret exists, as the
// controller hands them: the shard itself among them.
var issuers = []string{"root", "shard-1", "shard-2"}

func TestBuilders(t *testing.T) {
	for name, s := range map[string]*operatorv1alpha1.Shard{"minimal": minimalShard(), "loaded": loadedShard()} {
		t.Run(name, func(t *testing.T) {
			rs := rootShard()
			k := Server(s, rs)
			k.ServiceAccountIssuers = issuers
			client, err := ClientKubeconfig(s, rs)
			require.NoError(t, err)
			admin, err := k.AdminKubeconfig(kcp.LogicalClusterAdmin)
			require.NoError(t, err)
			objects := []any{client, admin, k.Service(), k.Deployment(nil, "hash")}
			for _, c := range Certificates(s, rs) {
				objects = append(objects, c)
			}
			golden.Assert(t, name, objects...)
		})
	}
}

func TestCacheFallsBackToTheRootShard(t *testing.T) {
	rs := rootShard()
	args := Server(minimalShard(), rs).Args()
	assert.Contains(t, args, "--cache-kubeconfig=/etc/kcp/client-kubeconfig/kubeconfig", "without a cache, the root shard's")

	rs.Spec.Cache = &operatorv1alpha1.CacheConfig{Reference: &corev1.LocalObjectReference{Name: "rs-cache"}}
	k := Server(minimalShard(), rs)
	assert.Equal(t, "rs-cache", k.Cache.Name, "the RootShard's cache")
	assert.Contains(t, k.Args(), "--cache-kubeconfig=/etc/cache-server/kubeconfig/kubeconfig")

	assert.Equal(t, "cache", Server(loadedShard(), rs).Cache.Name, "the Shard's own cache wins")

	// kcp-operator's Go SDK may send "cache: {}": no cache of the Shard's own.
	empty := minimalShard()
	empty.Spec.Cache = &operatorv1alpha1.CacheConfig{}
	assert.Equal(t, "rs-cache", Server(empty, rs).Cache.Name, "cache: {} is the RootShard's cache")
	rs.Spec.Cache = &operatorv1alpha1.CacheConfig{}
	assert.Contains(t, Server(empty, rs).Args(), "--cache-kubeconfig=/etc/kcp/client-kubeconfig/kubeconfig",
		"cache: {} on both is the root shard's embedded cache")
}

func TestShardCertificatesAreSignedByTheRootShardsCAs(t *testing.T) {
	for _, c := range Certificates(minimalShard(), rootShard()) {
		assert.Contains(t, []string{"root-server-ca", "root-client-ca", "root-service-account-ca", "root-requestheader-client-ca"}, *c.Spec.IssuerRef.Name, *c.Name)
		assert.Equal(t, "shard-1", c.Labels["operator.kcp.io/shard"])
	}
}

// TestServiceAccountAuthentication: with auth.serviceAccount enabled, a shard verifies the
// tokens of its root shard and of the other shards with their public keys, mounted without
// their private keys, and its own with its key pair as before; without it, only its own.
func TestServiceAccountAuthentication(t *testing.T) {
	k := Server(loadedShard(), rootShard())
	k.ServiceAccountIssuers = issuers
	assert.Equal(t, []string{
		"--service-account-key-file=/etc/kcp/tls/service-account/tls.crt",
		"--service-account-key-file=/etc/kcp/tls/service-account-keys/root/tls.crt",
		"--service-account-key-file=/etc/kcp/tls/service-account-keys/shard-2/tls.crt",
	}, withPrefix(k.Args(), "--service-account-key-file="), "one per shard, its own once")
	assert.Contains(t, k.MountedSecrets(), "root-service-account", "a new key rolls the pods")
	assert.Contains(t, k.MountedSecrets(), "shard-2-service-account")
	assert.NotContains(t, workload.Secrets(k.Mounts(), workload.WaitedSecret), "shard-2-service-account", "another shard's key does not hold back the Deployment")

	off := Server(minimalShard(), rootShard())
	off.ServiceAccountIssuers = issuers
	assert.Equal(t, []string{"--service-account-key-file=/etc/kcp/tls/service-account/tls.crt"},
		withPrefix(off.Args(), "--service-account-key-file="), "disabled: its own key only")
	assert.NotContains(t, off.MountedSecrets(), "root-service-account")
}

func TestTokenAuthentication(t *testing.T) {
	args := Server(loadedShard(), rootShard()).Args()
	assert.Contains(t, args, "--authentication-token-webhook-config-file=/etc/kcp/authentication/webhook/kubeconfig")
	assert.Contains(t, args, "--authentication-token-webhook-version=v1beta1")
	assert.Contains(t, args, "--token-auth-file=/etc/kcp/authentication/token/tokens.csv")
	assert.Empty(t, withPrefix(args, "--authentication-drop-groups"), "groups are the front proxy's")
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
// entries, which must reach kcp unchanged, in order and after the server's flags.
func TestExtraArgsComeLastAsWritten(t *testing.T) {
	s := loadedShard()
	extra := []string{"--encryption-provider-config", "/etc/kcp/encryption/config.yaml", "-v", "6"}
	s.Spec.ExtraArgs = extra
	args := Server(s, rootShard()).Args()
	require.Greater(t, len(args), len(extra))
	assert.Equal(t, extra, args[len(args)-len(extra):])
}

// bundledShard has CA bundles of its own, under a RootShard with a private address and one.
func bundledShard() (*operatorv1alpha1.Shard, *operatorv1alpha1.RootShard) {
	s := minimalShard()
	s.Spec.CABundleSecretRef = &corev1.LocalObjectReference{Name: "shard-extra-ca"}
	s.Spec.ClientCABundleRef = &corev1.LocalObjectReference{Name: "shard-extra-client-ca"}
	rs := rootShard()
	rs.Spec.External.PrivateHostname = "kcp.internal.example.com"
	rs.Spec.External.PrivatePort = ptr.To[int32](6443)
	rs.Spec.CABundleSecretRef = &corev1.LocalObjectReference{Name: "root-extra-ca"}
	return s, rs
}

// TestBundlesGolden pins what a Shard's caBundleSecretRef and clientCABundleRef and its
// RootShard's private address change: the mounts, the external kubeconfig and the bundles.
func TestBundlesGolden(t *testing.T) {
	s, rs := bundledShard()
	k := Server(s, rs)
	external, err := k.AdminKubeconfig(kcp.ExternalLogicalClusterAdmin)
	require.NoError(t, err)
	golden.Assert(t, "bundles", k.Deployment(nil, "hash"), external,
		MergedClientCA(s, []byte("ROOT-MERGED-CLIENT-CA\n"), []byte("SHARD-EXTRA-CLIENT-CA")),
		MergedCABundle(s, []byte("ROOT-MERGED-CA-BUNDLE"), []byte("SHARD-EXTRA-CA\n")))
}

// TestCABundleRefs checks which client CA a shard trusts and which bundle its external
// kubeconfig trusts, as kcp-operator's Shard does, plus the RootShard's caBundleSecretRef.
func TestCABundleRefs(t *testing.T) {
	ref := func(name string) *corev1.LocalObjectReference { return &corev1.LocalObjectReference{Name: name} }
	tests := []struct {
		name                       string
		shardCA, shardClient, rsCA *corev1.LocalObjectReference
		wantClientCA, wantBundle   string
	}{
		{name: "none: the RootShard's merged client CA, the server CA", wantClientCA: "root-merged-client-ca"},
		{name: "shard clientCABundleRef", shardClient: ref("x"), wantClientCA: "shard-1-merged-client-ca"},
		{name: "shard caBundleSecretRef", shardCA: ref("x"), wantClientCA: "root-merged-client-ca", wantBundle: "shard-1-merged-ca-bundle"},
		{name: "RootShard caBundleSecretRef", rsCA: ref("x"), wantClientCA: "root-merged-client-ca", wantBundle: "root-merged-ca-bundle"},
		{name: "both caBundleSecretRefs: the shard's, which holds the RootShard's", shardCA: ref("x"), rsCA: ref("y"),
			wantClientCA: "root-merged-client-ca", wantBundle: "shard-1-merged-ca-bundle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, rs := minimalShard(), rootShard()
			s.Spec.CABundleSecretRef, s.Spec.ClientCABundleRef, rs.Spec.CABundleSecretRef = tt.shardCA, tt.shardClient, tt.rsCA
			k := Server(s, rs)
			mounted := k.MountedSecrets()
			assert.Contains(t, mounted, tt.wantClientCA)
			if tt.wantClientCA != "root-merged-client-ca" {
				assert.NotContains(t, mounted, "root-merged-client-ca", "the shard's bundle replaces the RootShard's")
			}
			assert.Contains(t, workload.Secrets(k.Mounts(), workload.WaitedSecret), tt.wantClientCA, "the controller writes it: the Deployment waits for it")

			external, err := k.AdminKubeconfig(kcp.ExternalLogicalClusterAdmin)
			require.NoError(t, err)
			cfg, err := clientcmd.Load(external.Data[kcp.KubeconfigKey])
			require.NoError(t, err)
			caFile := cfg.Clusters[kcp.ShardBaseContext].CertificateAuthority
			if tt.wantBundle == "" {
				assert.Equal(t, "/etc/kcp/tls/ca/server/tls.crt", caFile)
				return
			}
			assert.Contains(t, mounted, tt.wantBundle)
			assert.Equal(t, "/etc/kcp/tls/ca/bundle/tls.crt", caFile)
		})
	}
}

// TestExternalAdminURL checks that the external logical-cluster-admin reaches the
// installation at the RootShard's private address, whose port defaults to the external one.
func TestExternalAdminURL(t *testing.T) {
	tests := []struct {
		name string
		host string
		port *int32
		want string
	}{
		{name: "no private address", want: "https://kcp.example.com:443"},
		{name: "private hostname, external port", host: "kcp.internal", want: "https://kcp.internal:443"},
		{name: "private hostname and port", host: "kcp.internal", port: ptr.To[int32](6443), want: "https://kcp.internal:6443"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := rootShard()
			rs.Spec.External.PrivateHostname, rs.Spec.External.PrivatePort = tt.host, tt.port
			k := Server(minimalShard(), rs)
			external, err := k.AdminKubeconfig(kcp.ExternalLogicalClusterAdmin)
			require.NoError(t, err)
			cfg, err := clientcmd.Load(external.Data[kcp.KubeconfigKey])
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.Clusters[kcp.ShardBaseContext].Server)
			assert.Contains(t, k.Args(), "--shard-external-url=https://kcp.example.com:443", "kcp's external URL stays the public one")
		})
	}
}

// TestVersionGoldens renders a shard at each kcp minor kcp-setups supports, so that a
// review sees the version gates: --external-hostname before v0.31, the mount proxy's
// certificate, mount and flags on v0.31.6+ and v0.32.3+.
func TestVersionGoldens(t *testing.T) {
	for minor, tag := range map[string]string{"v0.30": "v0.30.0", "v0.31": "v0.31.6", "v0.32": "v0.32.3"} {
		t.Run(minor, func(t *testing.T) {
			s, rs := minimalShard(), rootShard()
			s.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: tag}
			objects := []any{Server(s, rs).Deployment(nil, "hash")}
			for _, c := range Certificates(s, rs) {
				objects = append(objects, c)
			}
			golden.Assert(t, "minimal-"+minor, objects...)
		})
	}
}

// TestVirtualWorkspaceGolden renders a shard whose virtual workspaces a VirtualWorkspace
// serves: with a CA bundle, kcp verifies the server by the bundle, which holds the server CA
// and the CAs that may have issued the server's certificate through a template.
func TestVirtualWorkspaceGolden(t *testing.T) {
	s, rs := minimalShard(), rootShard()
	s.Spec.KcpVirtualWorkspace = &corev1.LocalObjectReference{Name: "vw"}
	k := Server(s, rs)
	k.VirtualWorkspace = &kcp.VirtualWorkspaceEndpoint{URL: "https://vw-shard-1.example.com:6443"}
	assert.Equal(t, []string{"--run-virtual-workspaces=false", "--shard-virtual-workspace-url=https://vw-shard-1.example.com:6443",
		"--shard-virtual-workspace-ca-file=/etc/kcp/tls/ca/server/tls.crt"}, k.VirtualWorkspaceArgs())
	assert.Contains(t, k.Args(), "--shard-client-cert-file=/etc/kcp/tls/client/tls.crt")
	golden.Assert(t, "virtual-workspace", k.Deployment(nil, "hash"))

	s.Spec.CABundleSecretRef = &corev1.LocalObjectReference{Name: "public-ca"}
	k = Server(s, rs)
	k.VirtualWorkspace = &kcp.VirtualWorkspaceEndpoint{URL: "https://vw-shard-1.example.com:6443"}
	assert.Contains(t, k.Args(), "--shard-virtual-workspace-ca-file=/etc/kcp/tls/ca/bundle/tls.crt")
	assert.Contains(t, k.MountedSecrets(), "shard-1-merged-ca-bundle")
}
