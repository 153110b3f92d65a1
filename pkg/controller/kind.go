package controller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	operatorinformers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions/operator/v1alpha1"
)

// Kind describes one of our kinds to the shared controller code, as store.Kind does to the
// registry: a package-level value per kind, so that a kind's controller keeps only what is
// its own (its watches and its reconcile).
type Kind[T Object, S any] struct {
	// Name is the owner label's kind of what an object owns: "rootshard".
	Name string
	// Noun names the kind in messages: "front proxy".
	Noun      string
	Finalizer string
	// Informer is the kind's shared informer.
	Informer func(operatorinformers.Interface) cache.SharedIndexInformer
	// Lister reads the kind's objects of a namespace from the caches.
	Lister func(l Listers, namespace string) Getter[T]
	// Client writes the kind's objects of a namespace.
	Client func(c clientset.Interface, namespace string) Client[T]
	// Status points at the status of an object; Common at its shared fields.
	Status func(obj T) *S
	Common func(status *S) Common
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

// SetupStatus is the Common of a kind whose phase is a setup's (Provisioning, Running,
// Deleting), which Lifecycle sets.
func SetupStatus(phase *operatorv1alpha1.Phase, observedGeneration *int64, conditions *[]metav1.Condition) Common {
	return Common{Phase: phase, ObservedGeneration: observedGeneration, Conditions: conditions}
}
