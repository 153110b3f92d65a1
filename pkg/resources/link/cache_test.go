package link_test

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
	linkcerts "github.com/kcp-setups/apiserver/pkg/link/linktest"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/link/linktest"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/reference/referencetest"
)

// cacheBundles is a bundles Secret in namespace b of a Link that names a CacheServer, whose
// CA is cacheCA: the cache-client data as the listener sends it, without the client key.
func cacheBundles(t *testing.T, cacheCA []byte) *corev1.Secret {
	bootstrap := linktest.Bootstrap(t, "b", "eu-1-link-bootstrap", "bootstrap-uid")
	s := linktest.Bundles(t, bootstrap, referencetest.CAs(t), reference.ShardJoin)
	cacheClient := link.KeepOnlyKeyless(map[string][]byte{
		reference.CacheURLKey: []byte("https://cache.a.svc.cluster.local:6443"), reference.CACertKey: cacheCA,
		reference.ClientCertKey: []byte("the home's client certificate"), reference.ClientKeyKey: []byte("the home's client key"),
	})
	for k, v := range cacheClient {
		s.Data[link.BundlesKey(reference.CacheClient, k)] = v
	}
	return s
}

// TestResolveCacheBundles: a cache client's bundles resolve to the CacheServer's URL and CA,
// and a bundles Secret without cache-client data (the Link names no CacheServer) says so.
func TestResolveCacheBundles(t *testing.T) {
	cacheCA, _ := credentialstest.NewCA(t, "cache-server-ca")
	r, err := link.ResolveBundles(cacheBundles(t, cacheCA), reference.CacheClient)
	require.NoError(t, err)
	assert.Equal(t, "https://cache.a.svc.cluster.local:6443", r.CacheURL.String())
	assert.Equal(t, cacheCA, r.CACert.PEM)
	assert.Empty(t, r.Client.PEM.Key, "no client key comes over the link")

	_, err = link.ResolveBundles(linkedBundles(t), reference.CacheClient)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "names no CacheServer")
	var problem *reference.Error
	require.ErrorAs(t, err, &problem)
	assert.Equal(t, operatorv1alpha1.ReasonLinkNamesNoCacheServer, problem.Reason)

	// The bootstrap's client certificate is a leaf.
	leaf := linktest.Bootstrap(t, "b", "eu-1-link-bootstrap", "bootstrap-uid").Data[corev1.TLSCertKey]
	require.NotEmpty(t, leaf)
	_, err = link.ResolveBundles(cacheBundles(t, leaf), reference.CacheClient)
	assert.ErrorIs(t, err, reference.ErrNotCA, "a leaf as the cache CA")
}

// TestCacheClientCertificate: a linked Shard's cache client is issued by the LinkIssuer of
// the cache CA of its joined RootShard, with the subject the link policy allows a
// CacheClient, and labelled as the Shard's.
func TestCacheClientCertificate(t *testing.T) {
	c := link.CacheClientCertificate("shard", "b", "eu", reference.JoinedName("shard", "eu"))
	assert.Equal(t, "eu-cache-client", *c.Name)
	assert.Equal(t, "eu-cache-client", *c.Spec.SecretName)
	assert.Equal(t, link.IssuerKind, *c.Spec.IssuerRef.Kind)
	assert.Equal(t, link.IssuerGroup, *c.Spec.IssuerRef.Group)
	assert.Equal(t, pki.CAName(reference.JoinedName("shard", "eu"), link.CacheServerCA), *c.Spec.IssuerRef.Name)
	assert.Equal(t, "cache-client", *c.Spec.CommonName)
	assert.Equal(t, []string{"system:masters"}, c.Spec.Subject.Organizations)
	assert.Equal(t, pki.ClientAuth.KeyUsages(), c.Spec.Usages)
	assert.Equal(t, "eu", c.Labels[pki.OwnerLabel("shard")])
}

// TestCacheKubeconfig: the kubeconfig toward the home's CacheServer, once the client is
// issued: its URL and CA from the bundles, the issued certificate and key.
func TestCacheKubeconfig(t *testing.T) {
	cacheCA, _ := credentialstest.NewCA(t, "cache-server-ca")
	r, err := link.ResolveBundles(cacheBundles(t, cacheCA), reference.CacheClient)
	require.NoError(t, err)

	none, err := link.CacheKubeconfig("b", "eu-cache-kubeconfig", nil, r, reference.KeyPair{Cert: []byte("crt")})
	require.NoError(t, err)
	assert.Nil(t, none, "not before the key pair is issued")

	s, err := link.CacheKubeconfig("b", "eu-cache-kubeconfig", map[string]string{"a": "b"}, r, reference.KeyPair{Cert: []byte("crt"), Key: []byte("key")})
	require.NoError(t, err)
	require.NotNil(t, s)
	assert.Equal(t, "eu-cache-kubeconfig", *s.Name)
	cfg, err := clientcmd.Load(s.Data[kcp.KubeconfigKey])
	require.NoError(t, err)
	ctx := cfg.Contexts[cfg.CurrentContext]
	assert.Equal(t, "https://cache.a.svc.cluster.local:6443", cfg.Clusters[ctx.Cluster].Server)
	assert.Equal(t, cacheCA, cfg.Clusters[ctx.Cluster].CertificateAuthorityData)
	assert.Equal(t, []byte("crt"), cfg.AuthInfos[ctx.AuthInfo].ClientCertificateData)
	assert.Equal(t, []byte("key"), cfg.AuthInfos[ctx.AuthInfo].ClientKeyData)
}

// TestCacheSigner: the CA a linked cache client must come from is the one of the cache CAs
// the home trusts that signed the home's own cache client: the old one until the home's
// CacheServer signs from the new one, then the new one; none without cache-client data.
func TestCacheSigner(t *testing.T) {
	from, to := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	oldCA, newCA, stranger := linkcerts.NewCA(t, "cache-server-ca", from, to), linkcerts.NewCA(t, "cache-server-ca-next", from, to), linkcerts.NewCA(t, "other", from, to)
	both := append(oldCA.PEM(), newCA.PEM()...)
	withClient := func(ca linkcerts.CA) *corev1.Secret {
		s := cacheBundles(t, both)
		leaf, _ := ca.Issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "cache-client"}, NotBefore: from, NotAfter: to,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		s.Data[link.BundlesKey(reference.CacheClient, reference.ClientCertKey)] = linkcerts.PEM("CERTIFICATE", leaf.Raw)
		return s
	}
	assert.Equal(t, oldCA.PEM(), link.CacheSigner(withClient(oldCA)), "the home's client still from the old CA")
	assert.Equal(t, newCA.PEM(), link.CacheSigner(withClient(newCA)), "the home's client issued again from the new CA")
	assert.Nil(t, link.CacheSigner(withClient(stranger)), "no trusted CA signed it")
	assert.Nil(t, link.CacheSigner(cacheBundles(t, both)), "a client certificate that is no PEM")
	assert.Nil(t, link.CacheSigner(linkedBundles(t)), "no cache-client data: the Link names no CacheServer")
}
