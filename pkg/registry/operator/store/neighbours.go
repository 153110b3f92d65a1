package store

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Some rules hold an object against the other objects of this API: a FrontProxy's path
// mappings stay in its RootShard's cluster domain, a Shard's base URL is no other shard's.
// They read those objects from the server's own storage (the watch cache), without a lock, as
// the claims on derived names do.

// Neighbours read the objects of this API, of every kind, from the server's own storage.
type Neighbours struct {
	ctx   context.Context
	kinds map[string]rest.Lister
}

// NeighboursOf reads the storage of every kind, by resource, for a request's ctx.
func NeighboursOf(ctx context.Context, kinds map[string]rest.Lister) Neighbours {
	return Neighbours{ctx: ctx, kinds: kinds}
}

// List returns the objects of resource (such as "shards") in namespace, or in every
// namespace when namespace is empty.
func (n Neighbours) List(resource, namespace string) ([]runtime.Object, error) {
	lister, ok := n.kinds[resource]
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("no storage of %s to read", resource))
	}
	list, err := lister.List(genericapirequest.WithNamespace(n.ctx, namespace), &metainternalversion.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the %s of namespace %q: %w", resource, namespace, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return items, nil
}

// Get returns the object of resource named name in namespace, nil when there is none.
func (n Neighbours) Get(resource, namespace, name string) (runtime.Object, error) {
	items, err := n.List(resource, namespace)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		if o, err := meta.Accessor(item); err == nil && o.GetName() == name {
			return item, nil
		}
	}
	return nil, nil
}

// NeighbourCheck holds obj against the other objects of this API; old is the stored object
// on update, nil on create. Its error reaches the client as is (a 422 or a 403).
type NeighbourCheck func(ctx context.Context, n Neighbours, obj, old runtime.Object) error

// SetNeighbourCheck has the endpoint run check after validation, admission and the claims,
// with the storage of every kind (by resource) to read from; it is called before the server
// serves.
func (r *REST) SetNeighbourCheck(kinds map[string]rest.Lister, check NeighbourCheck) {
	r.neighbours = func(ctx context.Context, obj, old runtime.Object) error {
		return check(ctx, NeighboursOf(ctx, kinds), obj, old)
	}
}

// neighboursCreate runs next, then the neighbour check of a new object.
func (r *REST) neighboursCreate(next rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	if r.neighbours == nil {
		return next
	}
	return func(ctx context.Context, obj runtime.Object) error {
		if next != nil {
			if err := next(ctx, obj); err != nil {
				return err
			}
		}
		return r.neighbours(ctx, obj, nil)
	}
}

// neighboursUpdate runs next, then the neighbour check against the stored object.
func (r *REST) neighboursUpdate(next rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	if r.neighbours == nil {
		return next
	}
	return func(ctx context.Context, obj, old runtime.Object) error {
		if next != nil {
			if err := next(ctx, obj, old); err != nil {
				return err
			}
		}
		return r.neighbours(ctx, obj, old)
	}
}
