package controller

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/listers"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	typed "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/typed/operator/v1alpha1"
	operatorinformers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions/operator/v1alpha1"
)

// Kind describes one of our kinds to the shared controller code, as store.Kind does to the
// registry: a package-level value per kind, so that a kind's controller keeps only what is
// its own (its watches and its reconcile). How its objects are reached, the informer, the
// cache, the client and the status, follows from T and S (ours).
type Kind[T Object, S any] struct {
	// Name is the owner label's kind of what an object owns: "rootshard".
	Name string
	// Noun names the kind in messages: "front proxy".
	Noun string
}

// Finalizer keeps an object until what the controllers created for it is gone.
func (k Kind[T, S]) Finalizer() string { return "operator.kcp.io/" + k.Name + "-cleanup" }

// Informer is the kind's shared informer.
func (k Kind[T, S]) Informer(i operatorinformers.Interface) cache.SharedIndexInformer {
	return wayTo[T]().informer(i)
}

// Cache is the kind's cache among x; nil when x has none.
func (k Kind[T, S]) Cache(x Indexes) cache.Indexer { return *wayTo[T]().cache(&x) }

// Lister reads the kind's objects of a namespace from its cache among x.
func (k Kind[T, S]) Lister(x Indexes, namespace string) Getter[T] {
	all := listers.New[T](orEmpty(k.Cache(x)), operatorv1alpha1.Resource(k.Name))
	return listers.NewNamespaced(all, namespace)
}

// Client writes the kind's objects of a namespace.
func (k Kind[T, S]) Client(c clientset.Interface, namespace string) Client[T] {
	return wayTo[T]().client(c.OperatorV1alpha1(), namespace).(Client[T])
}

// Status points at the status of an object: its field Status, of type S.
func (k Kind[T, S]) Status(obj T) *S {
	return reflect.ValueOf(obj).Elem().FieldByName("Status").Addr().Interface().(*S)
}

// Common points at the fields every kind's status has. A kind whose phase is a setup's
// (Provisioning, Running, Deleting) has Lifecycle set it; another, the Kubeconfig's
// (Provisioning, Ready, Failed), is its reconcile's, and deletion shows as Available=False
// with reason Deleting.
func (k Kind[T, S]) Common(status *S) Common {
	s := reflect.ValueOf(status).Elem()
	common := Common{
		ObservedGeneration: s.FieldByName("ObservedGeneration").Addr().Interface().(*int64),
		Conditions:         s.FieldByName("Conditions").Addr().Interface().(*[]metav1.Condition),
	}
	phase := s.FieldByName("Phase")
	if setup, ok := phase.Addr().Interface().(*operatorv1alpha1.Phase); ok {
		common.Phase = setup
	} else {
		common.OwnPhase = phase.String
	}
	return common
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

// ours are our kinds, a row each: its informer, its typed client and its cache among
// Indexes. A seventh kind is a row here, and a Kind in its controller's package.
var ours = []way{
	row[*operatorv1alpha1.RootShard](ourInformers.RootShards, ourClients.RootShards, func(x *Indexes) *cache.Indexer { return &x.RootShards }),
	row[*operatorv1alpha1.Shard](ourInformers.Shards, ourClients.Shards, func(x *Indexes) *cache.Indexer { return &x.Shards }),
	row[*operatorv1alpha1.FrontProxy](ourInformers.FrontProxies, ourClients.FrontProxies, func(x *Indexes) *cache.Indexer { return &x.FrontProxies }),
	row[*operatorv1alpha1.CacheServer](ourInformers.CacheServers, ourClients.CacheServers, func(x *Indexes) *cache.Indexer { return &x.CacheServers }),
	row[*operatorv1alpha1.Kubeconfig](ourInformers.Kubeconfigs, ourClients.Kubeconfigs, func(x *Indexes) *cache.Indexer { return &x.Kubeconfigs }),
	row[*operatorv1alpha1.VirtualWorkspace](ourInformers.VirtualWorkspaces, ourClients.VirtualWorkspaces, func(x *Indexes) *cache.Indexer { return &x.VirtualWorkspaces }),
}

// The generated interfaces the rows of ours name their kind's informer and client in.
type (
	ourInformers = operatorinformers.Interface
	ourClients   = typed.OperatorV1alpha1Interface
)

// way is how the shared code reaches the objects of one of our kinds: a row of ours.
type way struct {
	typ reflect.Type
	// name is the kind's name in owner labels (Kind.Name): its Go type's, in lower case.
	name     string
	informer func(ourInformers) cache.SharedIndexInformer
	// client returns the kind's Client of a namespace.
	client func(c ourClients, namespace string) any
	cache  func(*Indexes) *cache.Indexer
}

// informer is a generated informer of one of our kinds.
type informer interface {
	Informer() cache.SharedIndexInformer
}

// row is the way to the objects of type T through the generated informer and client.
func row[T Object, I informer, C Client[T]](informer func(ourInformers) I, client func(ourClients, string) C, objects func(*Indexes) *cache.Indexer) way {
	return way{
		typ:      reflect.TypeFor[T](),
		name:     strings.ToLower(reflect.TypeFor[T]().Elem().Name()),
		informer: func(i ourInformers) cache.SharedIndexInformer { return informer(i).Informer() },
		client:   func(c ourClients, namespace string) any { return client(c, namespace) },
		cache:    objects,
	}
}

// wayTo is the row of ours of T.
func wayTo[T Object]() way {
	typ := reflect.TypeFor[T]()
	for _, w := range ours {
		if w.typ == typ {
			return w
		}
	}
	panic(fmt.Sprintf("%v is not one of our kinds: it has no row in ours", typ))
}

// OurKind is the name of the kind of ours obj is of, as in owner labels ("rootshard"); "" for
// another object.
func OurKind(obj any) string {
	for _, w := range ours {
		if w.typ == reflect.TypeOf(obj) {
			return w.name
		}
	}
	return ""
}

// OurInformer is the informer of our kind named kind, as in owner labels ("rootshard"); nil
// for another name.
func (i Informers) OurInformer(kind string) cache.SharedIndexInformer {
	for _, w := range ours {
		if w.name == kind {
			return w.informer(i.Ours.Operator().V1alpha1())
		}
	}
	return nil
}

// Cache is the cache among x of our kind named kind, as in owner labels ("rootshard"); nil
// for another name.
func (x Indexes) Cache(kind string) cache.Indexer {
	for _, w := range ours {
		if w.name == kind {
			return *w.cache(&x)
		}
	}
	return nil
}
