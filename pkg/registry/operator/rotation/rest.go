// Package rotation serves the rotation subresource of RootShards and CacheServers: a
// CARotation starts or completes the two-phase rotation of the object's certificate
// authorities. The request writes the rotation's state into the object's status.rotations
// in etcd, with the object's resourceVersion as a precondition; the controller realizes it
// and advances the phases, so a rotation survives a restart at any step.
package rotation

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/util/dryrun"
	"k8s.io/client-go/util/retry"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// Access reaches the rotations of one kind's objects.
type Access struct {
	// Authorities are the rotatable CAs of the kind.
	Authorities []string
	// MemberKinds are the kinds of the members the kind's rotations wait for, which a
	// request may exclude from the wait (spec.excludeMembers); none for a CacheServer.
	MemberKinds []string
	// Rotations points into an object's status.rotations.
	Rotations func(runtime.Object) (*[]operator.CARotationState, bool)
	// Refuse says why the object cannot rotate an authority, at the authority's path, or nil:
	// a CA the user brings (caSecretRef) is the user's to rotate.
	Refuse func(obj runtime.Object, authority string, path *field.Path) *field.Error
}

// REST is the rotation subresource of one kind.
type REST struct {
	// Resource is the parent resource, for errors: rootshards or cacheservers.
	Resource schema.GroupResource
	// Status reads the object and writes its status.
	Status rest.Patcher
	Access Access
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Linked reports whether a Link names the RootShard namespace/name: its link CA exists
	// only then, so the authority "link" is refused without one. Nil refuses it always.
	Linked func(ctx context.Context, namespace, name string) (bool, error)
}

var (
	_ rest.NamedCreater             = &REST{}
	_ rest.GroupVersionKindProvider = &REST{}
	_ rest.Storage                  = &REST{}
)

// New returns an empty CARotation.
func (r *REST) New() runtime.Object { return &operator.CARotation{} }

// Destroy cleans up on shutdown; there is nothing to clean.
func (r *REST) Destroy() {}

// GroupVersionKind is the kind of the subresource's body in every version.
func (r *REST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return operatorv1alpha1.SchemeGroupVersion.WithKind("CARotation")
}

// Create takes the step the request asks for, for every authority it names, or for none: a
// step the current phases do not allow is a 409 that says why.
func (r *REST) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	req, ok := obj.(*operator.CARotation)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a CARotation: %T", obj))
	}
	out := req.DeepCopy()
	if err := store.BindToURL(ctx, name, &out.ObjectMeta); err != nil {
		return nil, err
	}
	out.Status = operator.CARotationStatus{}
	if errs := validation.ValidateCARotation(out, r.Access.Authorities, r.Access.MemberKinds); len(errs) > 0 {
		return nil, apierrors.NewInvalid(operator.Kind("CARotation"), name, errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, out.DeepCopyObject()); err != nil {
			return nil, err
		}
	}

	var rotations []operator.CARotationState
	var conflict *PhaseConflictError
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current, err := r.Status.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return err
		}
		errs, err := r.refused(ctx, current, out.Spec.Authorities)
		if err != nil {
			return err
		}
		if len(errs) > 0 {
			return apierrors.NewInvalid(operator.Kind("CARotation"), name, errs)
		}
		obj := current.DeepCopyObject()
		dst, ok := r.Access.Rotations(obj)
		if !ok {
			return apierrors.NewInternalError(fmt.Errorf("%s %s has no status.rotations", r.Resource, name))
		}
		next, changed, err := Apply(*dst, out.Spec, r.now())
		if errors.As(err, &conflict) {
			return nil // answered below, not retried
		}
		rotations = next
		if !changed || dryrun.IsDryRun(options.DryRun) {
			return nil
		}
		*dst = next
		// The object carries the resourceVersion it was read at: a write in between, by the
		// controller or another request, is a conflict, and the step is taken again on it.
		// Marked as the subresource's: the status takes Start and Complete from it alone.
		_, _, err = r.Status.Update(store.WithRotationRequest(ctx), name, rest.DefaultUpdatedObjectInfo(obj), nil, nil, false,
			&metav1.UpdateOptions{DryRun: options.DryRun, FieldManager: options.FieldManager})
		return err
	})
	if conflict != nil {
		return nil, apierrors.NewConflict(r.Resource, name, conflict)
	}
	if err != nil {
		return nil, err
	}
	out.Status.Rotations = Of(rotations, out.Spec.Authorities)
	return out, nil
}

// refused checks the named authorities against the object: the kind's own refusals, and the
// link CA of a RootShard no Link names.
func (r *REST) refused(ctx context.Context, obj runtime.Object, authorities []string) (field.ErrorList, error) {
	var errs field.ErrorList
	path := field.NewPath("spec", "authorities")
	for i, a := range authorities {
		if r.Access.Refuse != nil {
			if err := r.Access.Refuse(obj, a, path.Index(i)); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if a != string(pki.LinkCA) {
			continue
		}
		linked := false
		if m, ok := obj.(metav1.Object); ok && r.Linked != nil {
			var err error
			if linked, err = r.Linked(ctx, m.GetNamespace(), m.GetName()); err != nil {
				return nil, err
			}
		}
		if !linked {
			errs = append(errs, field.Invalid(path.Index(i), a, "no Link names the RootShard, so it has no link CA to rotate"))
		}
	}
	return errs, nil
}

func (r *REST) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
