package e2e

import (
	"crypto/x509"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
)

// TestLinkedShardUsesTheHomesCacheServer: a Shard in a second host cluster, joined over a
// Link that names the home's CacheServer (spec.cacheServerRef), uses that CacheServer over
// the link (spec.cache.link): it becomes Available; its cache kubeconfig names the
// CacheServer's URL and trusts the home's cache CA; its client certificate, whose key never
// left the second cluster, is signed by the home's cache CA with CN cache-client; and no
// Secret of the second cluster holds the private key of a CA of the home.
func TestLinkedShardUsesTheHomesCacheServer(t *testing.T) {
	parallel(t, alone)
	const remote = "xlinkcache-remote"
	ns := namespace(t, "xlinkcache-home")
	givenRootShard(t, ns, withSpec("  shardBaseURL: "+rootShardBaseURL+"\n"), withObjects(cacheServerManifest("cache")))
	waitFor(t, ns, "cacheserver/cache", "Available")
	link := crossClusterLink("eu-1", "eu-1.linkcache.example.com", remote) + "  cacheServerRef: {name: cache}\n"
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, link))
	waitFor(t, ns, "link/eu-1", "Ready")

	second := startSecondCluster(t)
	kubectlOn(t, second, "create", "namespace", remote)
	bootstrap := linkpki.BootstrapName("eu-1")
	copyReference(t, stackOf(t), ns, bootstrap, second, remote)
	kubectlOn(t, second, "apply", "-n", remote, "-f", writeManifest(t,
		linkedShardManifest("shard-1", bootstrap)+"  cache: {link: {secretRef: {name: "+bootstrap+"}}}\n"))
	logLinkedShardOnFailure(t, second, remote)
	waitForOn(t, second, remote, "shard/shard-1", "Available")

	cacheCA := secretCert(t, ns, "cache-ca")
	cfg, err := clientcmd.Load(decodeSecretOn(t, second, remote, "shard-1-shard-kcp-cache-kubeconfig", "kubeconfig"))
	require.NoError(t, err)
	ctx := cfg.Contexts[cfg.CurrentContext]
	require.NotNil(t, ctx)
	cluster, user := cfg.Clusters[ctx.Cluster], cfg.AuthInfos[ctx.AuthInfo]
	assert.Equal(t, string(decodeSecretOn(t, stackOf(t), ns, "cache-cache-client", "cache-url")), cluster.Server, "it names the CacheServer's URL")
	assert.Equal(t, cacheCA.Raw, parseCert(t, cluster.CertificateAuthorityData).Raw, "it trusts the home's cache CA")
	client := parseCert(t, user.ClientCertificateData)
	assert.Equal(t, "cache-client", client.Subject.CommonName)
	require.NoError(t, client.CheckSignatureFrom(cacheCA), "the home's cache CA signed the client certificate")
	assert.Contains(t, client.ExtKeyUsage, x509.ExtKeyUsageClientAuth)

	homeCAs := append(caPublicKeys(t, stackOf(t), ns), caPublicKeys(t, second, remote)...)
	assertNoCAKeyIn(t, second, homeCAs)
}
