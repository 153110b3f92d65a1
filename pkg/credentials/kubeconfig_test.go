package credentials

import (
	"crypto/x509/pkix"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
)

// TestKubeconfigIsWhatClientcmdWrites checks that Kubeconfig writes, byte for byte, what
// clientcmd.Write makes of the same configuration, for minted credentials toward every kind
// of target and for values the direct path must leave to clientcmd (quoted, empty, odd).
func TestKubeconfigIsWhatClientcmdWrites(t *testing.T) {
	caPEM, caKey := credentialstest.NewCA(t, "front-proxy-client-ca")
	ca, err := ParseCA(caPEM, caKey)
	require.NoError(t, err)
	minted, err := ca.Mint(pkix.Name{CommonName: "alice", Organization: []string{"team-a"}}, time.Now(), time.Hour)
	require.NoError(t, err)
	bundle, _ := credentialstest.NewCA(t, "server-ca")
	bundle = append(bundle, caPEM...)

	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 443}}}
	fp := &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "team-a"}}
	for _, tc := range []struct {
		name                string
		target              Target
		workspace           string
		caBundle, cert, key []byte
		direct              bool
	}{
		{name: "root shard", target: ForRootShard(rs), caBundle: bundle, cert: minted.CertPEM, key: minted.KeyPEM, direct: true},
		{name: "front proxy, workspace path", target: ForFrontProxy(fp, rs), workspace: "root:team-a", caBundle: bundle, cert: minted.CertPEM, key: minted.KeyPEM, direct: true},
		{name: "default workspace", target: ForRootShard(rs), caBundle: []byte("x"), cert: []byte("y"), key: []byte("z"), direct: true},
		{name: "no CA bundle", target: ForRootShard(rs), cert: minted.CertPEM, key: minted.KeyPEM},
		{name: "no key", target: ForRootShard(rs), caBundle: bundle, cert: minted.CertPEM},
		{name: "base64 that reads as a boolean", target: ForRootShard(rs), caBundle: []byte{0xb6, 0xbb, 0x9e}, cert: minted.CertPEM, key: minted.KeyPEM},
		{name: "base64 that starts with a digit", target: ForRootShard(rs), caBundle: []byte{0xd7, 0x6d, 0xf8}, cert: minted.CertPEM, key: minted.KeyPEM},
		{name: "base64 that starts with a slash", target: ForRootShard(rs), caBundle: []byte{0xff, 0xff}, cert: minted.CertPEM, key: minted.KeyPEM},
		{name: "URL with a space and a hash", target: Target{Kind: "RootShard", Name: "x", URL: "https://a b #c"}, caBundle: bundle, cert: minted.CertPEM, key: minted.KeyPEM},
		{name: "URL ending with a colon", target: Target{Kind: "RootShard", Name: "x", URL: "https://a:"}, workspace: "b:", caBundle: bundle, cert: minted.CertPEM, key: minted.KeyPEM},
		{name: "non-ASCII workspace", target: ForRootShard(rs), workspace: "ünïcode", caBundle: bundle, cert: minted.CertPEM, key: minted.KeyPEM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Kubeconfig(tc.target, tc.workspace, tc.caBundle, tc.cert, tc.key)
			require.NoError(t, err)
			want := expectedKubeconfig(t, tc.target, tc.workspace, tc.caBundle, tc.cert, tc.key)
			assert.Equal(t, string(want), string(got))
			_, direct := kubeconfigYAML(clustersOf(tc.target, tc.workspace), tc.caBundle, tc.cert, tc.key)
			assert.Equal(t, tc.direct, direct, "whether the direct path writes it")
			_, err = clientcmd.Load(got)
			require.NoError(t, err)
		})
	}
}

// FuzzKubeconfigIsWhatClientcmdWrites checks the same for any URL, workspace and data: the
// direct path either writes clientcmd's bytes or leaves them to it.
func FuzzKubeconfigIsWhatClientcmdWrites(f *testing.F) {
	f.Add("https://kcp.example.com:443", "root", []byte("-----BEGIN CERTIFICATE-----\n"), []byte("y"), []byte("z"), true)
	f.Add("https://a:", "true", []byte{0xb6, 0xbb, 0x9e}, []byte{0}, []byte{0xff}, false)
	f.Fuzz(func(t *testing.T, url, workspace string, caBundle, cert, key []byte, shardBase bool) {
		target := Target{Kind: "RootShard", Name: "root", URL: url, ShardBase: shardBase}
		got, err := Kubeconfig(target, workspace, caBundle, cert, key)
		want, wantErr := kubeconfigClientcmd(clustersOf(target, workspace), caBundle, cert, key)
		if wantErr != nil {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
	})
}

// clustersOf are Kubeconfig's clusters for target and workspace.
func clustersOf(target Target, workspace string) []kubeconfigCluster {
	if workspace == "" {
		workspace = operatorv1alpha1.DefaultWorkspace
	}
	clusters := []kubeconfigCluster{{DefaultContext, target.URL + "/clusters/" + workspace}, {BaseContext, target.URL}}
	if target.ShardBase {
		clusters = append(clusters, kubeconfigCluster{"shard-base", target.URL})
	}
	return clusters
}

// expectedKubeconfig is clientcmd's file for the configuration Kubeconfig describes.
func expectedKubeconfig(t *testing.T, target Target, workspace string, caBundle, cert, key []byte) []byte {
	data, err := kubeconfigClientcmd(clustersOf(target, workspace), caBundle, cert, key)
	require.NoError(t, err)
	return data
}
