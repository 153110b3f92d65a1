package controller

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/listers"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	typed "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/typed/operator/v1alpha1"
	operatorinformers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions/operator/v1alpha1"
)

// Kind describes one of our kinds to the shared controller code, as store.Kind does to the
// registry: a value per kind, of closures written for its types, so that a renamed field
// fails the build. The kinds are described in package kinds, whose registry (kinds.All)
// feeds the framework: the framework lists no kind of its own.
type Kind[T Object, S any] struct {
	// Name is the owner label's kind of what an object owns: "rootshard".
	Name string
	// Noun names the kind in messages: "front proxy".
	Noun string
	// Title names the kind as its API does: "FrontProxy".
	Title string
	// StatusOf points at an object's status.
	StatusOf func(T) *S
	// CommonOf points at the fields every kind's status has. A kind whose phase is a
	// setup's (Provisioning, Running, Deleting) has Lifecycle set it; another, the
	// Kubeconfig's (Provisioning, Ready, Failed), is its reconcile's (Common.OwnPhase), and
	// deletion shows as Available=False with reason Deleting.
	CommonOf func(*S) Common
	// InformerOf is the kind's shared informer among ours.
	InformerOf func(operatorinformers.Interface) cache.SharedIndexInformer
	// ClientOf writes the kind's objects of a namespace.
	ClientOf func(c typed.OperatorV1alpha1Interface, namespace string) Client[T]
	// ListWatchOf lists and watches the kind's objects of one namespace, for an informer of
	// the served namespaces alone (--watch-namespaces); obj is an empty object of the kind.
	ListWatchOf func(typed.OperatorV1alpha1Interface) (obj runtime.Object, list hostcluster.NamespacedList, watch hostcluster.NamespacedWatch)
	// Indexers are the indexes the kind contributes to its own cache (AddIndexes): each reads
	// the object alone, since an index is updated when its object changes, never when
	// another does.
	Indexers cache.Indexers
}

// generatedInformer is a generated informer of one of our kinds.
type generatedInformer interface {
	Informer() cache.SharedIndexInformer
}

// InformerFrom is a Kind's InformerOf from the generated informer of its type, a method
// expression such as operatorinformers.Interface.RootShards.
func InformerFrom[I generatedInformer](informer func(operatorinformers.Interface) I) func(operatorinformers.Interface) cache.SharedIndexInformer {
	return func(i operatorinformers.Interface) cache.SharedIndexInformer { return informer(i).Informer() }
}

// ClientFrom is a Kind's ClientOf from the generated client of its type, a method expression
// such as typed.OperatorV1alpha1Interface.RootShards.
func ClientFrom[T Object, C Client[T]](client func(typed.OperatorV1alpha1Interface, string) C) func(typed.OperatorV1alpha1Interface, string) Client[T] {
	return func(c typed.OperatorV1alpha1Interface, namespace string) Client[T] { return client(c, namespace) }
}

// ListWatchFrom is a Kind's ListWatchOf from the generated client of its type, whose lists
// are an L, and an empty object of the kind.
func ListWatchFrom[L runtime.Object, C interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}](obj runtime.Object, client func(typed.OperatorV1alpha1Interface, string) C) func(typed.OperatorV1alpha1Interface) (runtime.Object, hostcluster.NamespacedList, hostcluster.NamespacedWatch) {
	return func(c typed.OperatorV1alpha1Interface) (runtime.Object, hostcluster.NamespacedList, hostcluster.NamespacedWatch) {
		return obj.DeepCopyObject(),
			func(ctx context.Context, namespace string, opts metav1.ListOptions) (runtime.Object, error) {
				return client(c, namespace).List(ctx, opts)
			},
			func(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
				return client(c, namespace).Watch(ctx, opts)
			}
	}
}

// Finalizer keeps an object until what the controllers created for it is gone.
func (k Kind[T, S]) Finalizer() string { return "operator.kcp.io/" + k.Name + "-cleanup" }

// Informer is the kind's shared informer.
func (k Kind[T, S]) Informer(i operatorinformers.Interface) cache.SharedIndexInformer {
	return k.InformerOf(i)
}

// Cache is the kind's cache among x; nil when x has none.
func (k Kind[T, S]) Cache(x Indexes) cache.Indexer { return x[k.Name] }

// Lister reads the kind's objects of a namespace from its cache among x.
func (k Kind[T, S]) Lister(x Indexes, namespace string) listers.ResourceIndexer[T] {
	all := listers.New[T](orEmpty(k.Cache(x)), operatorv1alpha1.Resource(k.Name))
	return listers.NewNamespaced(all, namespace)
}

// Indexed are the kind's objects among x whose index holds value; none when the index cannot
// answer.
func (k Kind[T, S]) Indexed(x Indexes, index, value string) []T {
	return Indexed[T](k.Cache(x), index, value)
}

// Client writes the kind's objects of a namespace.
func (k Kind[T, S]) Client(c clientset.Interface, namespace string) Client[T] {
	return k.ClientOf(c.OperatorV1alpha1(), namespace)
}

// Status points at the status of an object.
func (k Kind[T, S]) Status(obj T) *S { return k.StatusOf(obj) }

// Common points at the fields every kind's status has.
func (k Kind[T, S]) Common(status *S) Common { return k.CommonOf(status) }

// KindName is the kind's name in owner labels: the registry's key.
func (k Kind[T, S]) KindName() string { return k.Name }

// Owns reports whether obj is of the kind.
func (k Kind[T, S]) Owns(obj any) bool {
	_, ok := obj.(T)
	return ok
}

// SharedInformer is the kind's informer among the factories of i.
func (k Kind[T, S]) SharedInformer(i Informers) cache.SharedIndexInformer {
	return k.InformerOf(i.Ours.Operator().V1alpha1())
}

// ListWatch lists and watches the kind's objects of one namespace through ours.
func (k Kind[T, S]) ListWatch(ours clientset.Interface) (obj runtime.Object, list hostcluster.NamespacedList, watch hostcluster.NamespacedWatch) {
	return k.ListWatchOf(ours.OperatorV1alpha1())
}

// IndexersOf are the indexes the kind contributes.
func (k Kind[T, S]) IndexersOf() cache.Indexers { return k.Indexers }

// Described is a Kind without its types: what the framework iterates over in a Registry,
// and what a Reference names.
type Described interface {
	KindName() string
	Owns(obj any) bool
	SharedInformer(i Informers) cache.SharedIndexInformer
	IndexersOf() cache.Indexers
	ListWatch(ours clientset.Interface) (obj runtime.Object, list hostcluster.NamespacedList, watch hostcluster.NamespacedWatch)
}

// Registry are our kinds: kinds.All. Everything the framework does for every kind
// (indexes, watches, caches) iterates it.
type Registry []Described

// KindOf is the name of the kind obj is of, as in owner labels ("rootshard"); "" for another
// object.
func (r Registry) KindOf(obj any) string {
	for _, k := range r {
		if k.Owns(obj) {
			return k.KindName()
		}
	}
	return ""
}

// Getter reads an object of a namespace by name from a cache: a generated namespace lister.
type Getter[T any] interface {
	Get(name string) (T, error)
}

// Client writes objects of a namespace: a generated typed client.
type Client[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// AddIndexes registers each kind's Indexers on its shared informer, those not registered yet,
// and returns the kinds' caches. Every controller calls it from New, before the informers
// start: the first registers them, the others find them.
func (r Registry) AddIndexes(i Informers) (Indexes, error) {
	x := Indexes{}
	for _, k := range r {
		informer := k.SharedInformer(i)
		have := informer.GetIndexer().GetIndexers()
		missing := cache.Indexers{}
		for name, f := range k.IndexersOf() {
			if _, ok := have[name]; !ok {
				missing[name] = f
			}
		}
		if len(missing) > 0 {
			if err := informer.AddIndexers(missing); err != nil {
				return nil, fmt.Errorf("adding the indexes of %s: %w", k.KindName(), err)
			}
		}
		x[k.KindName()] = informer.GetIndexer()
	}
	return x, nil
}
