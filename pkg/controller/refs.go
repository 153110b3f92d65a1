package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Lister lists the objects of one of our kinds in a namespace, as a generated namespace
// lister does.
type Lister[T metav1.Object] interface {
	List(selector labels.Selector) ([]T, error)
}

// Select are the keys of the objects a namespace lister holds that match: "which objects
// of this namespace refer to X". A cache that cannot list selects none.
func Select[T metav1.Object](objects Lister[T], match func(T) bool) []string {
	all, err := objects.List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []string
	for _, o := range all {
		if match(o) {
			keys = append(keys, o.GetNamespace()+"/"+o.GetName())
		}
	}
	return keys
}

// Every matches every object: for Select.
func Every[T any](T) bool { return true }

// OwnerKey is the key of the object of kind that owns a host object, by its owner label, or
// nil.
func OwnerKey(m metav1.Object, kind string) []string {
	if name := m.GetLabels()[pki.OwnerLabel(kind)]; name != "" {
		return []string{m.GetNamespace() + "/" + name}
	}
	return nil
}

// RefersTo reports whether a Shard's or FrontProxy's rootShard names rootShard.
func RefersTo(ref operatorv1alpha1.RootShardConfig, rootShard string) bool {
	return ref.Reference != nil && ref.Reference.Name == rootShard
}
