package store

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Storage answers an object too large to store with an etcd or gRPC error that the generic
// handlers only use to retry without managedFields, and otherwise send as a 500. The size
// of an object is the client's doing, so REST and StatusREST retry as the handlers would and
// then answer 413.

// tooLargeMessages are the storage's errors for an oversized object: etcd's own limit
// (--max-request-bytes) and its client's limit on a message. The handlers recognize them by
// the same texts.
var tooLargeMessages = []string{"etcdserver: request is too large", "trying to send message larger than max"}

// tooLarge says whether err is the storage refusing an object for its size.
func tooLarge(err error) bool {
	if err == nil || apierrors.IsRequestEntityTooLargeError(err) {
		return false
	}
	for _, m := range tooLargeMessages {
		if strings.Contains(err.Error(), m) {
			return true
		}
	}
	return false
}

// entityTooLarge turns the storage's size error into a 413 and leaves other errors alone.
func entityTooLarge(err error) error {
	if !tooLarge(err) {
		return err
	}
	return apierrors.NewRequestEntityTooLargeError("the object is too large to store: " + err.Error())
}

// create is a create in store where an object too large to store is retried without its
// managedFields, then refused with a 413.
func create(ctx context.Context, store *genericregistry.Store, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	out, err := store.Create(ctx, obj, createValidation, options)
	if tooLarge(err) {
		if accessor, accessorErr := meta.Accessor(obj); accessorErr == nil && len(accessor.GetManagedFields()) > 0 {
			accessor.SetManagedFields(nil)
			out, err = store.Create(ctx, obj, createValidation, options)
		}
	}
	return out, entityTooLarge(err)
}

// update is an update of store where an object too large to store is retried without its
// managedFields, then refused with a 413.
func update(ctx context.Context, store *genericregistry.Store, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	out, created, err := store.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
	if tooLarge(err) {
		out, created, err = store.Update(ctx, name, withoutManagedFields{objInfo}, createValidation, updateValidation, forceAllowCreate, options)
	}
	return out, created, entityTooLarge(err)
}

// withoutManagedFields is an update whose object has no managedFields.
type withoutManagedFields struct {
	rest.UpdatedObjectInfo
}

// UpdatedObject implements rest.UpdatedObjectInfo.
func (u withoutManagedFields) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	obj, err := u.UpdatedObjectInfo.UpdatedObject(ctx, oldObj)
	if err != nil {
		return nil, err
	}
	if accessor, accessorErr := meta.Accessor(obj); accessorErr == nil {
		accessor.SetManagedFields(nil)
	}
	return obj, nil
}
