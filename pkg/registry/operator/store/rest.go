package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// REST is the main endpoint of a kind.
type REST struct {
	*genericregistry.Store
	admit  admitter
	limits *Limits
	claims *Claims
	// neighbours, when set, holds an object against the other objects of this API
	// (SetNeighbourCheck).
	neighbours func(ctx context.Context, obj, old runtime.Object) error
	// preview, when set, answers every create and update with what it will do in the host
	// cluster (SetPreview).
	preview *Preview
}

// SetLimits sets the server's bounds on specs; it is called before the server serves.
func (r *REST) SetLimits(l Limits) { *r.limits = l }

// Create stores a new object, once admission, the kind's Admit and Permissions and the
// claims on derived names allow it; one too large to store gets a 413.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	return create(ctx, r.Store, obj, r.previewCreate(options.DryRun, r.served(r.neighboursCreate(r.claimsCreate(r.admit.create(createValidation))))), options)
}

// served refuses, before next, an object whose namespace the server does not serve
// (Limits.Namespaces): nothing would realize it, and the server's caches do not see its
// namespace. Objects already stored there can still be updated and deleted.
func (r *REST) served(next rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	return func(ctx context.Context, obj runtime.Object) error {
		if namespaces := r.limits.Namespaces; len(namespaces) > 0 {
			o, err := meta.Accessor(obj)
			if err != nil {
				return apierrors.NewInternalError(err)
			}
			if !slices.Contains(namespaces, o.GetNamespace()) {
				return apierrors.NewForbidden(r.DefaultQualifiedResource, o.GetName(),
					fmt.Errorf("namespace %q is not served by this server, which serves only %s (--watch-namespaces)",
						o.GetNamespace(), strings.Join(namespaces, ", ")))
			}
		}
		if next == nil {
			return nil
		}
		return next(ctx, obj)
	}
}

// Update stores a changed object, once admission, the kind's Admit and Permissions and the
// claims on derived names allow it; one too large to store gets a 413.
func (r *REST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return update(ctx, r.Store, name, objInfo, r.previewCreate(options.DryRun, r.served(r.neighboursCreate(r.claimsCreate(r.admit.create(createValidation))))),
		r.previewUpdate(options.DryRun, r.neighboursUpdate(r.claimsUpdate(r.admit.update(updateValidation)))),
		forceAllowCreate, options)
}

// Categories implements rest.CategoriesProvider.
func (*REST) Categories() []string { return Categories }

// StatusREST is the status subresource of a kind: it reads the whole object and writes only
// its status.
type StatusREST struct {
	store *genericregistry.Store
	// checks are what a write of the status is held to beyond validation: the parts only
	// the server writes (ServerWritten), and the steps of status.rotations.
	checks statusCheck
}

// SetController tells the status subresource the user the server's controllers write as
// (ControllerIdentity); it is called before the server serves.
func (r *StatusREST) SetController(u user.Info) { r.checks.controller.Set(u) }

var (
	_ rest.Patcher                = &StatusREST{}
	_ rest.TableConvertor         = &StatusREST{}
	_ rest.ResetFieldsStrategy    = &StatusREST{}
	_ rest.SingularNameProvider   = &REST{}
	_ rest.StandardStorage        = &REST{}
	_ rest.StorageVersionProvider = &REST{}
)

// New returns an empty object of the kind.
func (r *StatusREST) New() runtime.Object { return r.store.New() }

// Destroy cleans up resources on shutdown; the main endpoint owns the shared storage.
func (r *StatusREST) Destroy() {}

// Get retrieves the object, for the status subresource.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update writes the status of an object.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	// The status subresource never creates an object, whatever the patch type asks.
	return update(ctx, r.store, name, objInfo, createValidation, r.checks.update(updateValidation), false, options)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable implements rest.TableConvertor.
func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}

// NewREST returns the main and the status endpoint of a kind, backed by storage from
// optsGetter. authz answers the kind's Admit and Permissions.
func NewREST[T Object, Spec, Status any](scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, kind *Kind[T, Spec, Status],
	authz authorizer.Authorizer) (*REST, *StatusREST, error) {
	limits := &Limits{MaxReplicas: DefaultMaxReplicas}
	main := strategy[T, Spec, Status]{ObjectTyper: scheme, NameGenerator: names.SimpleNameGenerator, kind: kind, limits: limits}
	status := statusStrategy[T, Spec, Status]{strategy: main}

	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return kind.New() },
		NewListFunc:               kind.NewList,
		PredicateFunc:             kind.matcher,
		DefaultQualifiedResource:  kind.Resource,
		SingularQualifiedResource: kind.Singular,

		CreateStrategy:      main,
		UpdateStrategy:      main,
		DeleteStrategy:      main,
		ResetFieldsStrategy: main,

		TableConvertor: tableConvertor[T]{table: kind.Table, now: time.Now},
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: kind.attrs}); err != nil {
		return nil, nil, fmt.Errorf("setting up storage for %s: %w", kind.Resource, err)
	}

	statusStore := *store
	statusStore.UpdateStrategy = status
	statusStore.ResetFieldsStrategy = status
	check := statusCheck{resource: kind.Resource.Resource, controller: &ControllerIdentity{}}
	if kind.Rotations != nil {
		check.rotations = func(obj runtime.Object) ([]operator.CARotationState, bool) {
			o, ok := obj.(T)
			if !ok {
				return nil, false
			}
			return kind.Rotations(o), true
		}
	}
	check.serverWritten = serverWrittenChecks(kind.ServerWritten)
	return &REST{Store: store, admit: newAdmitter(kind, authz), limits: limits}, &StatusREST{store: &statusStore, checks: check}, nil
}

// attrs returns the labels and the selectable fields of an object.
func (k *Kind[T, Spec, Status]) attrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	o, ok := obj.(T)
	if !ok {
		return nil, nil, fmt.Errorf("not a %s: %T", k.Singular, obj)
	}
	fs := fields.Set{"metadata.name": o.GetName(), "metadata.namespace": o.GetNamespace()}
	if k.SelectableFields != nil {
		fs = generic.MergeFieldsSets(fs, k.SelectableFields(o))
	}
	return labels.Set(o.GetLabels()), fs, nil
}

// matcher is the selection predicate of the kind, with its labels and selectable fields.
func (k *Kind[T, Spec, Status]) matcher(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: k.attrs}
}

// serverWrittenChecks are the status subresource's checks of a kind's ServerWritten parts: a
// part changed is any difference of its value (or an object not of the kind).
func serverWrittenChecks[T any](parts []ServerWritten[T]) []serverWrittenCheck {
	var checks []serverWrittenCheck
	for _, w := range parts {
		checks = append(checks, serverWrittenCheck{path: w.Path.String(), why: w.Why, subresource: w.Subresource, changed: func(obj, old runtime.Object) bool {
			o, ok1 := obj.(T)
			p, ok2 := old.(T)
			return !ok1 || !ok2 || !apiequality.Semantic.DeepEqual(w.Value(o), w.Value(p))
		}})
	}
	return checks
}
