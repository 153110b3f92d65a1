// Package storetest holds what the registry's tests share: a kind's storage as a rest.Lister
// over objects held in memory, listed by namespace as the registry's List does, for the
// checks that read the other objects of this API (store.Neighbours, store.Claims).
package storetest

import (
	"context"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Lister is one kind's storage in a test: Objects (of the kind whose lists NewListFunc makes),
// listed by the request's namespace, or across namespaces for none.
type Lister struct {
	rest.TableConvertor
	NewListFunc func() runtime.Object
	Objects     []runtime.Object
}

// NewList is an empty list of the kind.
func (l Lister) NewList() runtime.Object { return l.NewListFunc() }

// List are the objects of the request's namespace, or all of them without one.
func (l Lister) List(ctx context.Context, _ *metainternalversion.ListOptions) (runtime.Object, error) {
	ns, _ := genericapirequest.NamespaceFrom(ctx)
	var items []runtime.Object
	for _, o := range l.Objects {
		if ns == "" || o.(metav1.Object).GetNamespace() == ns {
			items = append(items, o)
		}
	}
	list := l.NewListFunc()
	return list, apimeta.SetList(list, items)
}
