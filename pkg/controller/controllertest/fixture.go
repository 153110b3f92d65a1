package controllertest

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	opfake "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// Fixture is the Base of one kind's controller over a fake host and hand-fed caches: a unit
// test of its sync alone. The kind's package builds its controller from Base.
type Fixture[T controller.Object, S any] struct {
	*controller.Base[T, S]
	// Ours is the clientset our kinds are written through; Caches are their informers'
	// caches, which the test fills (Add) and Stored brings up to date.
	Ours   *opfake.Clientset
	Caches Caches
	Host   *Host
	Events *record.FakeRecorder
}

// NewFixture returns the Base of kind's controller over caches holding objs (Add).
func NewFixture[T controller.Object, S any](t testing.TB, kind controller.Kind[T, S], objs ...metav1.Object) *Fixture[T, S] {
	f := &Fixture[T, S]{Ours: opfake.NewSimpleClientset(), Host: NewHost(t), Events: record.NewFakeRecorder(1000), Caches: NewCaches()}
	f.Base = controller.NewBase(kind, controller.Deps{Ours: f.Ours, Host: f.Host.Host, Recorder: f.Events})
	f.SetIndexes(f.Caches.Indexes)
	f.Add(t, objs...)
	return f
}

// ControllerOf builds the controller C of the fixture's kind over the fixture (controller.Build),
// reading its caches; the fixture's Base is then the controller's.
func ControllerOf[C any, PC interface {
	*C
	controller.Reconciler[T, S]
}, T controller.Object, S any](f *Fixture[T, S]) PC {
	c := controller.Build[C, PC](f.Kind, controller.Deps{Ours: f.Ours, Host: f.Host.Host, Recorder: f.Events})
	f.Base = controller.BaseOf[T, S](c)
	f.SetIndexes(f.Caches.Indexes)
	return c
}

// Caches are the caches of our kinds in a fixture, with the indexes each kind contributes:
// by kind name (Indexes, what the controller reads), and by field for a test to fill.
type Caches struct {
	controller.Indexes
	RootShards, Shards, FrontProxies, CacheServers, Kubeconfigs, VirtualWorkspaces cache.Indexer
}

// NewCaches returns an empty cache of every kind of kinds.All.
func NewCaches() Caches {
	x := controller.Indexes{}
	for _, k := range kinds.All {
		x[k.KindName()] = NewCache(k.IndexersOf())
	}
	return Caches{Indexes: x, RootShards: kinds.RootShard.Cache(x), Shards: kinds.Shard.Cache(x), FrontProxies: kinds.FrontProxy.Cache(x),
		CacheServers: kinds.CacheServer.Cache(x), Kubeconfigs: kinds.Kubeconfig.Cache(x), VirtualWorkspaces: kinds.VirtualWorkspace.Cache(x)}
}

// Add puts objects into the caches: our kinds into theirs, those of the fixture's kind into
// our clientset too, the host's Secrets into the host's cache (the copies of reference
// Secrets, labelled operator.kcp.io/reference, into theirs).
func (f *Fixture[T, S]) Add(t testing.TB, objs ...metav1.Object) {
	for _, o := range objs {
		if s, ok := o.(*corev1.Secret); ok {
			name := "secrets"
			if _, ok := s.Labels[reference.Label]; ok {
				name = string(controller.ReferenceSecrets)
			}
			require.NoError(t, f.Host.Caches[name].Add(s))
			continue
		}
		if own, ok := o.(T); ok {
			require.NoError(t, f.Ours.Tracker().Add(own.DeepCopyObject()))
		}
		require.NoError(t, f.cacheOf(t, o).Add(o.(controller.Object).DeepCopyObject()))
	}
}

// Stored is the object namespace/name of the fixture's kind as our clientset holds it now,
// put into its cache too, as the informer would.
func (f *Fixture[T, S]) Stored(t testing.TB, namespace, name string) T {
	got, err := f.Kind.Client(f.Ours, namespace).Get(t.Context(), name, metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, f.cacheOf(t, got).Update(got))
	return got
}

// Writes are the writes to the host and to our kinds since the last Reset.
func (f *Fixture[T, S]) Writes() []string { return f.Host.Writes(f.Ours.Actions()) }

// Reset forgets the writes so far.
func (f *Fixture[T, S]) Reset() {
	f.Host.Reset()
	f.Ours.ClearActions()
}

// cacheOf is the cache of one of our kinds' objects.
func (f *Fixture[T, S]) cacheOf(t testing.TB, o any) cache.Indexer {
	objects := f.Caches.Indexes[kinds.All.KindOf(o)]
	require.NotNil(t, objects, "%T is not one of our kinds", o)
	return objects
}
