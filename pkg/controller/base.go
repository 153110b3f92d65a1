package controller

import (
	"time"

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
	// reconcile is the controller's Reconcile (Build).
	reconcile func(ctx context.Context, obj T, status *S) error
}

// Deps are what a kind's controller is built over: our clientset, the informers it watches,
// the host cluster it writes to, and the recorder of its Events.
type Deps struct {
	Ours      clientset.Interface
	Informers Informers
	Host      *hostcluster.Host
	Recorder  record.EventRecorder
	// LinkListenerURL is the https URL at which linked remotes reach this server's link
	// listener (docs/links.md); empty while it does not serve one.
	LinkListenerURL string
	// LinkState says whether the link of a bootstrap Secret is up, for the LinkReady
	// condition of the consumers that name it; nil while this server runs no link client.
	LinkState LinkStateFunc
	// OnLinkStateChange, when set, registers a function the link client calls when the state
	// of the link of a bootstrap Secret changes, so that LinkReady follows: Base.Watch
	// registers one per kind that has a LinkIndex, which enqueues the objects naming it.
	OnLinkStateChange func(changed func(namespace, bootstrap string))
	// LinkDeregister asks a link's home to deregister a linked Shard from kcp; nil while this
	// server runs no link client.
	LinkDeregister LinkDeregisterFunc
	// MaxKubeconfigValidity is the longest lifetime a Kubeconfig's certificate is issued for
	// (--max-kubeconfig-validity); zero bounds nothing.
	MaxKubeconfigValidity time.Duration
}

// NewBase returns the base of kind's controller over deps. It reads no cache until Watch, or
// SetIndexes in a unit test, gives it those of our kinds.
func NewBase[T Object, S any](kind Kind[T, S], deps Deps) *Base[T, S] {
	b := &Base[T, S]{}
	b.init(kind, deps)
	return b
}

// init makes b the base of kind's controller over deps, in place: the closures it sets read
// b itself, so a controller that embeds a Base is built with init on its own.
func (b *Base[T, S]) init(kind Kind[T, S], deps Deps) {
	*b = Base[T, S]{Lifecycle: Lifecycle[T, S]{Kind: kind, Host: deps.Host, Recorder: deps.Recorder, LinkState: deps.LinkState,
		LinkDeregister: deps.LinkDeregister}, Ours: deps.Ours}
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
	b.cleanup = b.releaseBootstrap
}

// base is the Base a kind's controller embeds: what makes it a Reconciler.
func (b *Base[T, S]) base() *Base[T, S] { return b }

// Reconciler is a kind's controller: a struct of its package that embeds Base (which gives
// it base) and says what its reconcile reads (Watches) and how it realizes an object
// (Reconcile). Reconcile receives the object and a copy of its status with
// observedGeneration set, and fills in the rest; it runs once cert-manager is installed, and
// the lifecycle around it (the finalizer, the status write, deletion) is Base's.
//
// A controller may also be a Releaser, an EtcdOwner or Configured: Build finds out.
type Reconciler[T Object, S any] interface {
	base() *Base[T, S]
	Reconcile(ctx context.Context, obj T, status *S) error
	Watches() Watches
}

// Releaser is a controller whose objects made something outside the host cluster (in kcp):
// Release undoes it first when an object is being deleted, and may set conditions on
// status, which is written either way. While it fails, nothing of the host is deleted and
// the object is retried with backoff, so that what it released stays reachable until then.
type Releaser[T Object, S any] interface {
	Release(ctx context.Context, obj T, status *S) error
}

// EtcdOwner is a controller whose objects may run a managed etcd: EtcdClaims are the names
// of the volume claims of an object's (none without one), which its deletion deletes when
// it carries AnnotationDeleteEtcdVolumes.
type EtcdOwner[T Object] interface {
	EtcdClaims(obj T) []string
}

// Configured is a controller that reads more of its deps than Base keeps: Build hands them
// to Configure.
type Configured interface {
	Configure(deps Deps)
}

// Build builds the controller C of kind over deps, reading no cache until Watch (or
// SetIndexes, in a unit test): Setup's first half, and how a unit test builds it.
func Build[C any, PC interface {
	*C
	Reconciler[T, S]
}, T Object, S any](kind Kind[T, S], deps Deps) PC {
	c := PC(new(C))
	b := c.base()
	b.init(kind, deps)
	b.reconcile = c.Reconcile
	if r, ok := any(c).(Releaser[T, S]); ok {
		b.release = r.Release
	}
	if e, ok := any(c).(EtcdOwner[T]); ok {
		b.etcdClaims = e.EtcdClaims
	}
	if cf, ok := any(c).(Configured); ok {
		cf.Configure(deps)
	}
	return c
}

// BaseOf is the Base that c embeds.
func BaseOf[T Object, S any](c Reconciler[T, S]) *Base[T, S] { return c.base() }

// Setup is the New of a kind's package: var New = controller.Setup[Controller](kinds.X) sets
// up over deps the controller C of the kind, which reconciles a key with its Reconcile and is
// woken by what its Watches declare. Run starts it.
func Setup[C any, PC interface {
	*C
	Reconciler[T, S]
}, T Object, S any](kind Kind[T, S]) Constructor {
	return Constructor{Kind: kind.Name, Title: kind.Title, New: func(deps Deps) (Runner, error) {
		c, err := BuildWatching[C, PC](kind, deps)
		// The controller itself, which runs as its Base does: the manager finds the
		// controllers that plan (a preview's) among those it sets up.
		if r, ok := any(c).(Runner); ok {
			return r, err
		}
		return c.base(), err
	}}
}

// BuildWatching builds the controller C of kind over deps (Build) and sets up its loop and
// watches (Watch): the controller Setup's New sets up, as its own type, for a unit test of
// its watches.
func BuildWatching[C any, PC interface {
	*C
	Reconciler[T, S]
}, T Object, S any](kind Kind[T, S], deps Deps) (PC, error) {
	c := Build[C, PC](kind, deps)
	b := c.base()
	return c, b.Watch(deps, b.SyncKey, c.Watches())
}

// Runner is a controller set up: Run reconciles with workers until ctx is done.
type Runner interface {
	Run(ctx context.Context, workers int) error
}

// Constructor is a kind's New: how the manager sets up the controller of the kind named Kind
// (in owner labels; Title in messages) over deps.
type Constructor struct {
	Kind, Title string
	New         func(Deps) (Runner, error)
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
	if _, ok := b.Indexers[UsersSecretIndex]; ok && watches.Mounting == nil {
		b.Watched.Mounting = b.Naming(UsersSecretIndex)
	}
	if _, ok := b.Indexers[ReferenceSecretIndex]; ok && watches.Referencing == nil {
		b.Watched.Referencing = b.Naming(ReferenceSecretIndex)
	}
	if _, ok := b.Indexers[LinkIndex]; ok && watches.Linking == nil {
		b.Watched.Linking = b.Naming(LinkIndex)
	}
	if linking := b.Watched.Linking; linking != nil && deps.OnLinkStateChange != nil {
		deps.OnLinkStateChange(func(namespace, bootstrap string) {
			for _, key := range linking(namespace, bootstrap) {
				b.Loop.Queue.Add(key)
			}
		})
	}
	return b.Watched.Register(b.Loop, b.Host, inf)
}

// Run reconciles with workers until ctx is done.
func (b *Base[T, S]) Run(ctx context.Context, workers int) error {
	return b.Loop.Run(ctx, workers)
}

// SyncKey reconciles the object of key: the lifecycle around the controller's Reconcile,
// which runs once cert-manager is installed. It is the loop's sync, and a unit test's.
func (b *Base[T, S]) SyncKey(ctx context.Context, key string) error {
	return b.Sync(ctx, key, b.RequiringCertManager(b.reconcile))
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
