package rootshard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// rootShardWithCacheCopy is the RootShard root whose spec.cache.secretRef names the copy of
// kcp-system/cache's cache-client Secret in team-a.
func rootShardWithCacheCopy() *operatorv1alpha1.RootShard {
	rs := testRootShard()
	rs.Spec.Cache = &operatorv1alpha1.CacheConfig{SecretRef: &corev1.LocalObjectReference{Name: "cache-cache-client"}}
	return rs
}

// TestRootShardUsesItsCacheCopy: a RootShard naming a copy of a cache-client Secret writes
// its kubeconfig toward that cache server and runs with it.
func TestRootShardUsesItsCacheCopy(t *testing.T) {
	rs := rootShardWithCacheCopy()
	f := newFixture(t, rs)
	in := controllertest.NewInstallation(t)
	f.Host.PutReference(t, in.Copies[reference.CacheClient])
	f.converge(t)

	name := rootshard.Server(rs).CacheKubeconfig()
	assert.Equal(t, "root-kcp-cache-kubeconfig", name)
	in.AssertCacheKubeconfig(t, f.Host, rootshard.Kind, "root", name)
	got, err := kinds.RootShard.Lister(f.c.Indexes, "team-a").Get("root")
	require.NoError(t, err)
	assert.True(t, meta.IsStatusConditionTrue(got.Status.Conditions, operatorv1alpha1.ConditionReferenceValid), "conditions: %+v", got.Status.Conditions)
}

// TestRootShardWithAnUnusableCacheCopyStillHasItsPKI: a copy of another reference Secret
// under the name is reported, naming the Secret and no key, while the RootShard's PKI is
// applied; its kcp server waits for the kubeconfig.
func TestRootShardWithAnUnusableCacheCopyStillHasItsPKI(t *testing.T) {
	rs := rootShardWithCacheCopy()
	f := newFixture(t, rs)
	events := record.NewFakeRecorder(1000)
	f.c.Recorder = events
	in := controllertest.NewInstallation(t)
	f.Host.PutReference(t, in.CopyAs(reference.KubeconfigIssuer, "cache-cache-client"))
	for range 4 {
		require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
		f.hostCatchesUp(t)
	}

	got, err := kinds.RootShard.Lister(f.c.Indexes, "team-a").Get("root")
	require.NoError(t, err)
	controllertest.AssertReferenceInvalid(t, got.Status.Conditions, operatorv1alpha1.ReasonReferenceSecretInvalid, "cache-cache-client")
	assert.NotEqual(t, operatorv1alpha1.PhaseRunning, got.Status.Phase)

	for _, ca := range append([]string{pki.RootCAName("root")}, pki.CAName("root", pki.ServerCA), pki.CAName("root", pki.ClientCA)) {
		_, exists, err := f.Host.Caches["issuers"].GetByKey("team-a/" + ca)
		require.NoError(t, err)
		assert.True(t, exists, "the PKI is applied: Issuer %s", ca)
	}
	_, exists, err := f.Host.Caches["certificates"].GetByKey("team-a/root-server")
	require.NoError(t, err)
	assert.True(t, exists, "the PKI is applied: Certificate root-server")
	_, exists, err = f.Host.Caches["secrets"].GetByKey("team-a/" + rootshard.Server(rs).CacheKubeconfig())
	require.NoError(t, err)
	assert.False(t, exists, "no kubeconfig from a copy that cannot be used")
	_, exists, err = f.Host.Caches["deployments"].GetByKey("team-a/root-kcp")
	require.NoError(t, err)
	assert.False(t, exists, "the kcp server waits for its cache kubeconfig (its internal front proxy needs none)")

	// The RootShard reports its references in status alone, as for a missing CacheServer.
	in.AssertNoKeyMaterial(t, got.Status.Conditions, controllertest.Events(events))

	// The copy fixed heals it.
	f.Host.PutReference(t, in.Copies[reference.CacheClient])
	f.converge(t)
	in.AssertCacheKubeconfig(t, f.Host, rootshard.Kind, "root", rootshard.Server(rs).CacheKubeconfig())
}

// TestRootShardWithAnUnlabelledCacheCopySaysHowToLabelIt: a copy of a cache-client Secret
// without the reference label is reported as such, with the command that labels it, while
// the RootShard's PKI is applied; the label added heals it.
func TestRootShardWithAnUnlabelledCacheCopySaysHowToLabelIt(t *testing.T) {
	rs := rootShardWithCacheCopy()
	f := newFixture(t, rs)
	events := record.NewFakeRecorder(1000)
	f.c.Recorder = events
	in := controllertest.NewInstallation(t)
	for range 2 {
		require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
		f.hostCatchesUp(t)
	}
	got, err := kinds.RootShard.Lister(f.c.Indexes, "team-a").Get("root")
	require.NoError(t, err)
	controllertest.AssertReferenceInvalid(t, got.Status.Conditions, operatorv1alpha1.ReasonReferenceSecretNotFound, "cache-cache-client")

	f.Host.PutReference(t, controllertest.Unlabelled(in.Copies[reference.CacheClient]))
	for range 4 {
		require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
		f.hostCatchesUp(t)
	}
	got, err = kinds.RootShard.Lister(f.c.Indexes, "team-a").Get("root")
	require.NoError(t, err)
	controllertest.AssertReferenceNotLabelled(t, got.Status.Conditions, "cache-cache-client", reference.CacheClient)
	_, exists, err := f.Host.Caches["certificates"].GetByKey("team-a/root-server")
	require.NoError(t, err)
	assert.True(t, exists, "the PKI is applied: Certificate root-server")
	_, exists, err = f.Host.Caches["deployments"].GetByKey("team-a/root-kcp")
	require.NoError(t, err)
	assert.False(t, exists, "the kcp server waits for its cache kubeconfig (its internal front proxy needs none)")
	in.AssertNoKeyMaterial(t, got.Status.Conditions, controllertest.Events(events))

	f.Host.PutReference(t, in.Copies[reference.CacheClient])
	f.converge(t)
	in.AssertCacheKubeconfig(t, f.Host, rootshard.Kind, "root", rootshard.Server(rs).CacheKubeconfig())
}
