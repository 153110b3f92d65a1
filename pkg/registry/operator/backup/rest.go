// Package backup serves the backup subresource of RootShards and Shards: an
// EtcdSnapshotRequest asks for a snapshot of the object's managed etcd now. The request
// writes the snapshot asked for, under the name it answers, into the object's
// status.etcd.pendingSnapshot in etcd, with the object's resourceVersion as a precondition;
// the controller has the backup agent take it under that name, lists it in
// status.etcd.snapshots and clears pendingSnapshot, so a request survives a restart.
package backup

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/util/retry"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// REST is the backup subresource of one kind.
type REST struct {
	// Resource is the parent resource, for errors: rootshards or shards.
	Resource schema.GroupResource
	// Status reads the object and writes its status.
	Status rest.Patcher
	Access Access
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

var (
	_ rest.NamedCreater             = &REST{}
	_ rest.GroupVersionKindProvider = &REST{}
	_ rest.Storage                  = &REST{}
)

// New returns an empty EtcdSnapshotRequest.
func (r *REST) New() runtime.Object { return &operator.EtcdSnapshotRequest{} }

// Destroy cleans up on shutdown; there is nothing to clean.
func (r *REST) Destroy() {}

// GroupVersionKind is the kind of the subresource's body in every version.
func (r *REST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return operatorv1alpha1.SchemeGroupVersion.WithKind("EtcdSnapshotRequest")
}

// Create asks for a snapshot of the object's managed etcd: it records it as
// status.etcd.pendingSnapshot and answers its name. An object without a managed etcd, or
// without spec.etcd.managed.backup, is a 422 at that field; one being deleted, or with a
// snapshot asked for and not taken yet, a 409.
func (r *REST) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	req, ok := obj.(*operator.EtcdSnapshotRequest)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not an EtcdSnapshotRequest: %T", obj))
	}
	out := req.DeepCopy()
	if err := store.BindToURL(ctx, name, &out.ObjectMeta); err != nil {
		return nil, err
	}
	out.Status = operator.EtcdSnapshotRequestStatus{}
	if createValidation != nil {
		if err := createValidation(ctx, out.DeepCopyObject()); err != nil {
			return nil, err
		}
	}

	var pending *operator.EtcdPendingSnapshot
	// refusal is answered as it is, never retried: a 409 of its own is no write conflict.
	var refusal error
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current, err := r.Status.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return err
		}
		obj := current.DeepCopyObject()
		target, ok := r.Access.Etcd(obj)
		if !ok {
			return apierrors.NewInternalError(fmt.Errorf("%s %s has no spec.etcd", r.Resource, name))
		}
		if refusal = r.refused(name, target); refusal != nil {
			return nil
		}
		pending, err = r.pending(target)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		if *target.Status == nil {
			*target.Status = &operator.ManagedEtcdStatus{}
		}
		(*target.Status).PendingSnapshot = pending
		// The object carries the resourceVersion it was read at: a write in between, by the
		// controller or another request, is a conflict, and the request is checked again on
		// it. Marked as the subresource's: the status takes pendingSnapshot from it alone.
		_, _, err = r.Status.Update(store.WithSubresourceWrite(ctx, store.BackupSubresource), name, rest.DefaultUpdatedObjectInfo(obj), nil, nil, false,
			&metav1.UpdateOptions{DryRun: options.DryRun, FieldManager: options.FieldManager})
		return err
	})
	if refusal != nil {
		return nil, refusal
	}
	if err != nil {
		return nil, err
	}
	out.Status = operator.EtcdSnapshotRequestStatus{Snapshot: pending.Name, RequestTime: pending.RequestTime.DeepCopy()}
	return out, nil
}

// refused says why the object cannot take a snapshot now, or nil: it has no managed etcd or
// no store for its snapshots (422 at the field), it is being deleted, or a snapshot asked
// for is not taken yet (409).
func (r *REST) refused(name string, target Target) error {
	etcd := field.NewPath("spec", "etcd")
	switch {
	case target.Spec.Managed == nil:
		return apierrors.NewInvalid(r.Access.Kind, name, field.ErrorList{field.Forbidden(etcd.Child("endpoints"),
			"the etcd is one the server does not run: it takes snapshots of a managed etcd only")})
	case target.Spec.Managed.Backup == nil:
		return apierrors.NewInvalid(r.Access.Kind, name, field.ErrorList{field.Required(etcd.Child("managed", "backup"),
			"the managed etcd has no store for snapshots: set spec.etcd.managed.backup (a schedule is optional) to take them")})
	case target.Meta.GetDeletionTimestamp() != nil:
		return apierrors.NewConflict(r.Resource, name, fmt.Errorf("the %s is being deleted", r.Access.Kind.Kind))
	}
	if s := *target.Status; s != nil && s.PendingSnapshot != nil {
		p := s.PendingSnapshot
		return apierrors.NewConflict(r.Resource, name, fmt.Errorf(
			"the snapshot %s, asked for at %s, is not taken yet: status.etcd.snapshots lists it once it is; ask again then",
			p.Name, p.RequestTime.UTC().Format(time.RFC3339)))
	}
	return nil
}

// pending is the snapshot to ask for now: named after the managed etcd's base and the time,
// as the backup agent names the snapshots it takes.
func (r *REST) pending(target Target) (*operator.EtcdPendingSnapshot, error) {
	now := r.now().UTC().Truncate(time.Second)
	var taken []operator.EtcdSnapshotInfo
	if s := *target.Status; s != nil {
		taken = s.Snapshots
	}
	name, err := SnapshotName(r.Access.Base(target.Meta.GetName()), now, taken)
	if err != nil {
		return nil, err
	}
	return &operator.EtcdPendingSnapshot{Name: name, RequestTime: metav1.NewTime(now)}, nil
}

func (r *REST) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
