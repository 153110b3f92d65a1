package shard

import (
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// TestLinkedShardUsesItsHomesCacheServer: a linked Shard whose spec.cache.link names its
// link waits, with the reason LinkNamesNoCacheServer, while the bundles hold no cache-client
// data; once they do, it has its cache client issued by the LinkIssuer of the cache CA, and
// writes its cache kubeconfig from the bundles and the issued key pair.
func TestLinkedShardUsesItsHomesCacheServer(t *testing.T) {
	f := newLinkedFixture(t)
	s, err := kinds.Shard.Lister(f.c.Indexes, "team-a").Get("shard-1")
	require.NoError(t, err)
	s = s.DeepCopy()
	s.Spec.Cache = &operatorv1alpha1.CacheConfig{Link: &operatorv1alpha1.RootShardLink{SecretRef: corev1.LocalObjectReference{Name: linkBootstrap}}}
	require.NoError(t, f.Caches.Shards.Update(s))
	_, err = f.Ours.OperatorV1alpha1().Shards("team-a").Update(t.Context(), s, metav1.UpdateOptions{})
	require.NoError(t, err)

	putLinked(t, f, true)
	s = f.sync(t)
	ref := condition(s, operatorv1alpha1.ConditionReferenceValid)
	assert.Equal(t, metav1.ConditionFalse, ref.Status)
	assert.Equal(t, operatorv1alpha1.ReasonLinkNamesNoCacheServer, ref.Reason)
	assert.Contains(t, ref.Message, "names no CacheServer")

	// The stream brings the CacheServer's data.
	cacheCA, _ := credentialstest.NewCA(t, "cache-server-ca")
	bundles := f.Host.Secret(t, "team-a", link.BundlesName(linkBootstrap)).DeepCopy()
	bundles.Data[link.BundlesKey(reference.CacheClient, reference.CacheURLKey)] = []byte("https://cache.home.svc.cluster.local:6443")
	bundles.Data[link.BundlesKey(reference.CacheClient, reference.CACertKey)] = cacheCA
	f.Host.PutSecret(t, bundles)
	require.NoError(t, f.Host.Caches["secrets"].Update(bundles))
	for range 4 {
		f.sync(t)
		f.Host.CatchUp(t)
	}
	s = f.sync(t)
	assert.Equal(t, metav1.ConditionTrue, condition(s, operatorv1alpha1.ConditionReferenceValid).Status, "conditions: %+v", s.Status.Conditions)
	obj, exists, err := f.Host.Caches["certificates"].GetByKey("team-a/" + link.CacheClientName("shard-1"))
	require.NoError(t, err)
	require.True(t, exists, "the cache client Certificate is applied")
	crt := obj.(*cmv1.Certificate)
	assert.Equal(t, link.IssuerKind, crt.Spec.IssuerRef.Kind)
	assert.Equal(t, link.CacheClientIssuer(reference.JoinedName("shard", "shard-1")), crt.Spec.IssuerRef.Name)
	assert.Equal(t, "cache-client", crt.Spec.CommonName)
	// The fake cert-manager issued it (CatchUp), as the LinkIssuer does over the link.
	issued := f.Host.Secret(t, "team-a", crt.Spec.SecretName)
	require.NotEmpty(t, issued.Data[corev1.TLSPrivateKeyKey])
	kubeconfig := "shard-1-shard-kcp-cache-kubeconfig"
	cfg, err := clientcmd.Load(f.Host.Secret(t, "team-a", kubeconfig).Data[kcp.KubeconfigKey])
	require.NoError(t, err)
	ctx := cfg.Contexts[cfg.CurrentContext]
	assert.Equal(t, "https://cache.home.svc.cluster.local:6443", cfg.Clusters[ctx.Cluster].Server)
	assert.Equal(t, cacheCA, cfg.Clusters[ctx.Cluster].CertificateAuthorityData)
	assert.Equal(t, issued.Data[corev1.TLSCertKey], cfg.AuthInfos[ctx.AuthInfo].ClientCertificateData)
	assert.Equal(t, issued.Data[corev1.TLSPrivateKeyKey], cfg.AuthInfos[ctx.AuthInfo].ClientKeyData)
	assert.Equal(t, "shard-1", f.Host.Secret(t, "team-a", kubeconfig).Labels[pki.OwnerLabel("shard")])
}
