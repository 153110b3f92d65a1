package rootshard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

func testLink(name, rootShard string) *operatorv1alpha1.Link {
	return &operatorv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"},
		Spec: operatorv1alpha1.LinkSpec{RootShardRef: corev1.LocalObjectReference{Name: rootShard}, Identity: name + ".links.example.com"}}
}

// hostHas reports whether the host's cache cacheName holds team-a/name.
func (f *fixture) hostHas(t *testing.T, cacheName, name string) bool {
	_, exists, err := f.Host.Caches[cacheName].GetByKey("team-a/" + name)
	require.NoError(t, err)
	return exists
}

// TestLinkPKIOnlyWhileALinkNamesTheRootShard: a RootShard no Link names has no link PKI; once
// one names it, its link CA, the CA's Issuer and the listener's serving certificate are
// applied, and counted in CertificatesReady.
func TestLinkPKIOnlyWhileALinkNamesTheRootShard(t *testing.T) {
	f := newFixture(t, testRootShard())
	f.Add(t, testLink("elsewhere", "other-root"))
	f.converge(t)
	for _, name := range []string{"root-link-ca", "root-link-server"} {
		assert.False(t, f.hostHas(t, "certificates", name), "no %s without a Link of the RootShard", name)
	}
	assert.False(t, f.hostHas(t, "issuers", "root-link-ca"))

	f.Add(t, testLink("eu-1", "root"))
	f.converge(t)
	for _, name := range []string{"root-link-ca", "root-link-server"} {
		assert.True(t, f.hostHas(t, "certificates", name), "%s is applied once a Link names the RootShard", name)
	}
	assert.True(t, f.hostHas(t, "issuers", "root-link-ca"))
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
	assert.Empty(t, f.Writes(), "a resync of a realized RootShard with a Link must not write")
}
