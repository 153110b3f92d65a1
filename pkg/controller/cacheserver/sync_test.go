package cacheserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	opfake "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/fake"
	listers "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

type fixture struct {
	c            *Controller
	ours         *opfake.Clientset
	host         *controllertest.Host
	cacheServers cache.Indexer
	rootShards   cache.Indexer
}

func newFixture(t *testing.T, objs ...metav1.Object) *fixture {
	f := &fixture{ours: opfake.NewSimpleClientset(), host: controllertest.NewHost(t),
		cacheServers: controllertest.NewCache(), rootShards: controllertest.NewCache()}
	for _, o := range objs {
		switch o := o.(type) {
		case *operatorv1alpha1.CacheServer:
			require.NoError(t, f.ours.Tracker().Add(o.DeepCopy()))
			require.NoError(t, f.cacheServers.Add(o.DeepCopy()))
		case *operatorv1alpha1.RootShard:
			require.NoError(t, f.rootShards.Add(o.DeepCopy()))
		}
	}
	f.c = &Controller{client: f.ours, cacheServers: listers.NewCacheServerLister(f.cacheServers),
		rootShards: listers.NewRootShardLister(f.rootShards), indexes: controller.Indexes{CacheServers: f.cacheServers, RootShards: f.rootShards}, host: f.host.Host, recorder: record.NewFakeRecorder(1000)}
	return f
}

// sync syncs the CacheServer, then lets its cache and the host catch up.
func (f *fixture) sync(t *testing.T) *operatorv1alpha1.CacheServer {
	require.NoError(t, f.c.sync(t.Context(), "team-a/cache"))
	got, err := f.ours.OperatorV1alpha1().CacheServers("team-a").Get(t.Context(), "cache", metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, f.cacheServers.Update(got))
	f.host.CatchUp(t)
	return got
}

func cacheServer() *operatorv1alpha1.CacheServer {
	return &operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "team-a", Generation: 1, Finalizers: []string{Finalizer}}}
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
		_, exists, err := f.host.Caches["secrets"].GetByKey("team-a/" + name)
		require.NoError(t, err)
		assert.True(t, exists, "the Secret %s is written once its certificates are issued", name)
	}
	assert.Len(t, f.host.Caches["deployments"].List(), 1)

	f.host.Reset()
	f.ours.ClearActions()
	f.sync(t)
	assert.Empty(t, f.host.Writes(f.ours.Actions()), "a resync of an unchanged, realized CacheServer must not write")
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
	require.NoError(t, f.c.sync(t.Context(), "team-a/cache"))
	deletes := deleteCollections(f.host)
	assert.Contains(t, deletes, "certificates app.kubernetes.io/managed-by=kcp-setups,operator.kcp.io/cacheserver=cache")
	for _, d := range deletes {
		assert.NotContains(t, d, "pki-bootstrap", "a RootShard still uses the namespace bootstrap")
	}
	got, err := f.ours.OperatorV1alpha1().CacheServers("team-a").Get(t.Context(), "cache", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, got.Finalizers, "the finalizer goes once what the CacheServer owns is deleted")
	assert.Equal(t, operatorv1alpha1.PhaseDeleting, got.Status.Phase)

	// The last user takes the bootstrap with it.
	f = newFixture(t, deleting)
	require.NoError(t, f.c.sync(t.Context(), "team-a/cache"))
	assert.Contains(t, deleteCollections(f.host),
		"certificates app.kubernetes.io/component=pki-bootstrap,app.kubernetes.io/instance=kcp-pki-ca,app.kubernetes.io/managed-by=kcp-setups")
}
