package virtualworkspace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

func TestServerSANs(t *testing.T) {
	v := loaded()
	v.Spec.CertificateTemplates = nil
	server := v.Certificates()[0]
	assert.Equal(t, "loaded-virtual-workspace-server", *server.Name)
	assert.Equal(t, "root-server-ca", *server.Spec.IssuerRef.Name)
	assert.Equal(t, "loaded-virtual-workspace", *server.Spec.CommonName)
	assert.Equal(t, []string{
		"loaded-virtual-workspace", "loaded-virtual-workspace.team-a", "loaded-virtual-workspace.team-a.svc",
		"loaded-virtual-workspace.team-a.svc.example.internal", "vw.example.com", "vw.internal.example.com", "localhost",
	}, server.Spec.DNSNames)
}

func TestIdentities(t *testing.T) {
	certs := minimal().Certificates()
	require.Len(t, certs, 3)
	client, admin := certs[1].Spec, certs[2].Spec
	assert.Equal(t, "vw-virtual-workspace", *client.CommonName)
	assert.Equal(t, []string{"system:masters"}, client.Subject.Organizations)
	assert.Equal(t, "root-client-ca", *client.IssuerRef.Name)
	assert.Equal(t, "external-logical-cluster-admin", *admin.CommonName)
	assert.Equal(t, []string{"system:kcp:external-logical-cluster-admin"}, admin.Subject.Organizations)
	assert.Equal(t, "root-client-ca", *admin.IssuerRef.Name)
}

func TestURLs(t *testing.T) {
	v := minimal()
	assert.Equal(t, "https://vw-virtual-workspace.team-a.svc.cluster.local:6443", v.ServiceURL())
	assert.Equal(t, "https://vw.example.com:6443", v.URL())
	v.Spec.External.Port = 0
	assert.Equal(t, "https://vw.example.com:6443", v.URL(), "the default external port")
	v.Spec.External.Port = 443
	assert.Equal(t, "https://vw.example.com:443", v.URL())
	assert.Equal(t, v.URL(), v.Endpoint().URL)
	v.Spec.External.Hostname = ""
	assert.Equal(t, v.ServiceURL(), v.URL(), "without a hostname, the Service")
	v.Spec.ClusterDomain = ""
	assert.Equal(t, "https://vw-virtual-workspace.team-a.svc.cluster.local:6443", v.ServiceURL())
	l := loaded()
	assert.Equal(t, "https://loaded-virtual-workspace.team-a.svc.example.internal:6443", l.ServiceURL())
}

func TestClientKubeconfig(t *testing.T) {
	v := loaded()
	v.Spec.KubeconfigSecretRef = nil
	kubeconfigs, err := v.Kubeconfigs()
	require.NoError(t, err)
	require.NotEmpty(t, kubeconfigs)
	assert.Equal(t, "loaded-virtual-workspace-kubeconfig", *kubeconfigs[0].Name)
	cfg, err := clientcmd.Load(kubeconfigs[0].Data[kcp.KubeconfigKey])
	require.NoError(t, err)
	cluster := cfg.Clusters[kcp.ShardBaseContext]
	assert.Equal(t, "https://shard-1-shard-kcp.team-a.svc.cluster.local:6443", cluster.Server, "the target shard")
	assert.Equal(t, serverCAFile, cluster.CertificateAuthority)
	assert.Equal(t, clientDir+"/tls.crt", cfg.AuthInfos["loaded-virtual-workspace"].ClientCertificate)
}

// TestExternalAdminKubeconfig: the installation's private address and the CA bundle that
// verifies it, where they exist, as the shards' own external admin kubeconfig has them.
func TestExternalAdminKubeconfig(t *testing.T) {
	rs := rootShard()
	rs.Spec.External.PrivateHostname = "kcp.internal"
	rs.Spec.CABundleSecretRef = &corev1.LocalObjectReference{Name: "public-ca"}
	v := minimal()
	v.Target = rootshard.Server(rs)
	kubeconfigs, err := v.Kubeconfigs()
	require.NoError(t, err)
	require.Len(t, kubeconfigs, 2)
	assert.Equal(t, "vw-virtual-workspace-external-admin-kubeconfig", *kubeconfigs[1].Name)
	cfg, err := clientcmd.Load(kubeconfigs[1].Data[kcp.KubeconfigKey])
	require.NoError(t, err)
	cluster := cfg.Clusters[kcp.ShardBaseContext]
	assert.Equal(t, "https://kcp.internal:443", cluster.Server)
	assert.Equal(t, caBundleDir+"/tls.crt", cluster.CertificateAuthority)
	assert.Contains(t, waitedSecrets(v), "root-merged-ca-bundle")
	assert.Equal(t, externalAdminDir+"/tls.key", cfg.AuthInfos[kcp.ExternalLogicalClusterAdmin].ClientKey)

	cfg, err = clientcmd.Load(mustKubeconfigs(t, minimal())[1].Data[kcp.KubeconfigKey])
	require.NoError(t, err)
	assert.Equal(t, "https://kcp.example.com:443", cfg.Clusters[kcp.ShardBaseContext].Server)
	assert.Equal(t, serverCAFile, cfg.Clusters[kcp.ShardBaseContext].CertificateAuthority)
}

func mustKubeconfigs(t *testing.T, v VirtualWorkspace) []*corev1ac.SecretApplyConfiguration {
	t.Helper()
	out, err := v.Kubeconfigs()
	require.NoError(t, err)
	return out
}

// TestClientCA: the target's client CA bundle, the one its shard mounts, unless the
// VirtualWorkspace has a bundle of its own.
func TestClientCA(t *testing.T) {
	assert.Equal(t, "root-merged-client-ca", minimal().ClientCASecret())
	s, rs := shardOf(rootShard()), rootShard()
	s.Spec.ClientCABundleRef = &corev1.LocalObjectReference{Name: "shard-extra"}
	assert.Equal(t, "shard-1-merged-client-ca", onShard(object("vw"), s, rs).ClientCASecret(), "the Shard's own bundle")
	assert.Equal(t, "loaded-virtual-workspace-merged-client-ca", loaded().ClientCASecret())
	assert.Equal(t, []string{"extra-client-ca", "extra-ca"}, loaded().BundleSources())
	assert.Nil(t, minimal().BundleSources())
}

// TestCABundle: caBundleSecretRef gives the external admin kubeconfig a bundle of its own, on
// top of the target's (its CA bundle, else the server CA), as kcp-operator documents it.
func TestCABundle(t *testing.T) {
	v := minimal()
	v.Spec.CABundleSecretRef = &corev1.LocalObjectReference{Name: "extra-ca"}
	require.True(t, v.HasExternalAdmin())
	assert.Equal(t, v.MergedCABundleName(), v.externalAdminCABundle())
	assert.Contains(t, waitedSecrets(v), v.MergedCABundleName(), "the Deployment waits for it")
	admin := mustKubeconfigs(t, v)[1]
	assert.Contains(t, string(admin.Data[kcp.KubeconfigKey]), caBundleDir+"/tls.crt", "the external admin trusts it")
	assert.Equal(t, "root-server-ca", minimal().TargetServerCABundle())
	assert.Empty(t, minimal().externalAdminCABundle(), "the server CA alone")
	bundle := loaded().MergedCABundle([]byte("target\n"), []byte("extra\n"))
	assert.Equal(t, "loaded-virtual-workspace-merged-ca-bundle", *bundle.Name)
	assert.Contains(t, string(bundle.Data["tls.crt"]), "target")
	assert.Contains(t, string(bundle.Data["tls.crt"]), "extra")
}
