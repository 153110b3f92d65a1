package cacheserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// fixture is a CacheServer Controller over a fake host and hand-fed caches.
type fixture struct {
	*controllertest.Fixture[*operatorv1alpha1.CacheServer, operatorv1alpha1.CacheServerStatus]
	c *Controller
}

func newFixture(t *testing.T, objs ...metav1.Object) *fixture {
	f := &fixture{Fixture: controllertest.NewFixture(t, kinds.CacheServer, objs...)}
	f.c = controllertest.ControllerOf[Controller](f.Fixture)
	return f
}

// sync syncs the CacheServer, then lets its cache and the host catch up.
func (f *fixture) sync(t *testing.T) *operatorv1alpha1.CacheServer {
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/cache"))
	got := f.Stored(t, "team-a", "cache")
	f.Host.CatchUp(t)
	return got
}

func cacheServer() *operatorv1alpha1.CacheServer {
	return &operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "team-a", Generation: 1, Finalizers: []string{kinds.CacheServer.Finalizer()}}}
}

func TestResyncOfARealizedCacheServerWritesNothing(t *testing.T) {
	f := newFixture(t, cacheServer())
	var got *operatorv1alpha1.CacheServer
	for range 4 {
		got = f.sync(t)
	}
	require.Equal(t, operatorv1alpha1.PhaseRunning, got.Status.Phase, "conditions: %+v", got.Status.Conditions)
	assert.EqualValues(t, 1, got.Status.ObservedGeneration)
	for _, name := range []string{"cache-client-ca", kcp.CacheKubeconfigName("cache")} {
		_, exists, err := f.Host.Caches["secrets"].GetByKey("team-a/" + name)
		require.NoError(t, err)
		assert.True(t, exists, "the Secret %s is written once its certificates are issued", name)
	}
	assert.Len(t, f.Host.Caches["deployments"].List(), 1)

	f.Reset()
	f.sync(t)
	assert.Empty(t, f.Writes(), "a resync of an unchanged, realized CacheServer must not write")
}

// deleteCollections are the label selectors of the collection deletes made on the host.
func deleteCollections(h *controllertest.Host) []string {
	var out []string
	for _, a := range append(h.Kube.Actions(), h.CM.Actions()...) {
		if dc, ok := a.(clienttesting.DeleteCollectionAction); ok {
			out = append(out, a.GetResource().Resource+" "+dc.GetListRestrictions().Labels.String())
		}
	}
	return out
}

func TestDeletionKeepsTheBootstrapWhileARootShardUsesIt(t *testing.T) {
	deleting := cacheServer()
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"}}

	f := newFixture(t, deleting, rs)
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/cache"))
	deletes := deleteCollections(f.Host)
	assert.Contains(t, deletes, "certificates app.kubernetes.io/managed-by=kcp-setups,operator.kcp.io/cacheserver=cache")
	for _, d := range deletes {
		assert.NotContains(t, d, "pki-bootstrap", "a RootShard still uses the namespace bootstrap")
	}
	got, err := f.Ours.OperatorV1alpha1().CacheServers("team-a").Get(t.Context(), "cache", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, got.Finalizers, "the finalizer goes once what the CacheServer owns is deleted")
	assert.Equal(t, operatorv1alpha1.PhaseDeleting, got.Status.Phase)

	// The last user takes the bootstrap with it.
	f = newFixture(t, deleting)
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/cache"))
	assert.Contains(t, deleteCollections(f.Host),
		"certificates app.kubernetes.io/component=pki-bootstrap,app.kubernetes.io/instance=kcp-pki-ca,app.kubernetes.io/managed-by=kcp-setups")
}
