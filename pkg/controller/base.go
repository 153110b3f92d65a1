package controller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
)

// Base is what every kind's controller is made of: the kind's lifecycle, built once, the
// caches of our kinds with their indexes, our clientset, and the loop. A kind's controller
// embeds it and keeps only what is its own: its watches, its reconcile and what they read.
type Base[T Object, S any] struct {
	Lifecycle[T, S]
	// Indexes are the caches of our kinds: a kind's Lister reads them.
	Indexes Indexes
	// Ours writes our kinds.
	Ours clientset.Interface
	// Loop and Watched, what the loop watches, are set by Watch.
	Loop    *Loop
	Watched Watches
}

// Deps are what a kind's controller is built over: our clientset, the informers it watches,
// the host cluster it writes to, and the recorder of its Events.
type Deps struct {
	Ours      clientset.Interface
	Informers Informers
	Host      *hostcluster.Host
	Recorder  record.EventRecorder
}

// NewBase returns the base of kind's controller over deps. It reads no cache until Watch, or
// SetIndexes in a unit test, gives it those of our kinds.
func NewBase[T Object, S any](kind Kind[T, S], deps Deps) *Base[T, S] {
	b := &Base[T, S]{Lifecycle: Lifecycle[T, S]{Kind: kind, Host: deps.Host, Recorder: deps.Recorder}, Ours: deps.Ours}
	b.SetIndexes(Indexes{})
	opts := metav1.UpdateOptions{FieldManager: hostcluster.FieldManager}
	// Through b, so that the caches SetIndexes sets later are read.
	b.Get = func(namespace, name string) (T, error) { return kind.Lister(b.Indexes, namespace).Get(name) }
	b.Update = func(ctx context.Context, obj T) (T, error) {
		return kind.Client(b.Ours, obj.GetNamespace()).Update(ctx, obj, opts)
	}
	b.UpdateStatus = func(ctx context.Context, obj T) (T, error) {
		return kind.Client(b.Ours, obj.GetNamespace()).UpdateStatus(ctx, obj, opts)
	}
	b.Cleanup = b.releaseBootstrap
	return b
}

// Setup is the New of a kind's package: it sets up over deps the controller C that build
// makes of the kind's Base (a unit test builds it the same way over a fixture's Base), which
// reconciles a key with sync and is woken by what watches declares. Run starts it.
func Setup[T Object, S any, C any](kind Kind[T, S], build func(*Base[T, S]) C, sync func(C, context.Context, string) error,
	watches func(C) Watches) func(Deps) (C, error) {
	return func(deps Deps) (C, error) {
		b := NewBase(kind, deps)
		c := build(b)
		return c, b.Watch(deps, func(ctx context.Context, key string) error { return sync(c, ctx, key) }, watches(c))
	}
}

// SetIndexes has b read our kinds from the caches of indexes.
func (b *Base[T, S]) SetIndexes(indexes Indexes) { b.Indexes = indexes }

// Watch registers the indexes of our kinds on the informers of deps, reads from their caches,
// and sets up the loop: sync reconciles a key, and the kind's own events and those watches
// declares enqueue keys. Run starts it.
func (b *Base[T, S]) Watch(deps Deps, sync func(ctx context.Context, key string) error, watches Watches) error {
	inf := deps.Informers
	indexes, err := inf.Kinds.AddIndexes(inf)
	if err != nil {
		return err
	}
	b.SetIndexes(indexes)
	b.Loop = NewLoop(b.Name, sync)
	b.Watched = watches
	b.Watched.Own = b.SharedInformer(inf)
	return b.Watched.Register(b.Loop, b.Host, inf)
}

// Run reconciles with workers until ctx is done.
func (b *Base[T, S]) Run(ctx context.Context, workers int) error {
	return b.Loop.Run(ctx, workers)
}

// Reconciling is the sync of a kind whose reconcile needs cert-manager: the lifecycle around
// reconcile, which runs once cert-manager is installed.
func (b *Base[T, S]) Reconciling(ctx context.Context, key string, reconcile func(ctx context.Context, obj T, status *S) error) error {
	return b.Sync(ctx, key, b.RequiringCertManager(reconcile))
}

// Objects is the kind's cache.
func (b *Base[T, S]) Objects() cache.Indexer { return b.Cache(b.Indexes) }

// Keys are the keys of the kind's objects whose index holds value.
func (b *Base[T, S]) Keys(index, value string) []string { return Keys(b.Objects(), index, value) }

// Naming is, for an index of the kind's objects by the objects they name (UsersSecretIndex,
// ReferenceSecretIndex, VirtualWorkspaceIndex), the keys of those that name the object name of
// namespace: a Watches' Mounting or Referencing.
func (b *Base[T, S]) Naming(index string) func(namespace, name string) []string {
	return func(namespace, name string) []string { return b.Keys(index, IndexValue(namespace, name)) }
}

// NamingObject is Naming of an object: a Reference's Keys.
func (b *Base[T, S]) NamingObject(index string) func(metav1.Object) []string {
	naming := b.Naming(index)
	return func(m metav1.Object) []string { return naming(m.GetNamespace(), m.GetName()) }
}

// InNamespace are the keys of every object of the kind in m's namespace.
func (b *Base[T, S]) InNamespace(m metav1.Object) []string {
	return InNamespace(b.Objects(), m.GetNamespace())
}
