package store

import (
	"context"
	"fmt"
	"k8s.io/apimachinery/pkg/api/meta"
	"maps"
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// strategy is the create and update strategy of a kind: the main endpoint owns the spec and
// ignores the status.
type strategy[T Object, Spec, Status any] struct {
	runtime.ObjectTyper
	names.NameGenerator
	kind *Kind[T, Spec, Status]
	// limits are the server's bounds, shared with the REST that SetLimits configures.
	limits *Limits
}

var (
	_ rest.RESTCreateStrategy  = strategy[Object, struct{}, struct{}]{}
	_ rest.RESTUpdateStrategy  = strategy[Object, struct{}, struct{}]{}
	_ rest.RESTDeleteStrategy  = strategy[Object, struct{}, struct{}]{}
	_ rest.ResetFieldsStrategy = strategy[Object, struct{}, struct{}]{}
	_ rest.RESTUpdateStrategy  = statusStrategy[Object, struct{}, struct{}]{}
	_ rest.ResetFieldsStrategy = statusStrategy[Object, struct{}, struct{}]{}
)

func (strategy[T, Spec, Status]) NamespaceScoped() bool { return true }

// GetResetFields says that the main endpoint never writes the status, for server-side apply.
func (strategy[T, Spec, Status]) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(operatorv1alpha1.SchemeGroupVersion.String()): fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

// PrepareForCreate drops any status a client sent, starts the generation at 1 and
// normalizes the spec.
func (s strategy[T, Spec, Status]) PrepareForCreate(_ context.Context, obj runtime.Object) {
	o := obj.(T)
	*s.kind.Status(o) = *new(Status)
	o.SetGeneration(1)
	if s.kind.Normalize != nil {
		s.kind.Normalize(o)
	}
}

// PrepareForUpdate keeps the stored status, normalizes the spec and bumps the generation
// when the spec changed.
func (s strategy[T, Spec, Status]) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	newObj, oldObj := obj.(T), old.(T)
	*s.kind.Status(newObj) = *s.kind.Status(oldObj)
	if s.kind.Normalize != nil {
		s.kind.Normalize(newObj)
	}
	if !apiequality.Semantic.DeepEqual(s.kind.Spec(newObj), s.kind.Spec(oldObj)) {
		newObj.SetGeneration(oldObj.GetGeneration() + 1)
	}
}

func (s strategy[T, Spec, Status]) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return append(append(s.kind.Validate(obj.(T)), s.validateLimits(obj.(T), nil)...), ValidateAdopt(obj.(T))...)
}

func (s strategy[T, Spec, Status]) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	prev := old.(T)
	return append(append(s.kind.ValidateUpdate(obj.(T), prev), s.validateLimits(obj.(T), &prev)...), ValidateAdoptUpdate(obj.(T), prev)...)
}

// validateLimits holds spec.replicas, and every nested pod count (spec.proxy.replicas), to
// the server's --max-replicas. An update is held to it only for a count it changes, so that
// lowering the flag does not lock existing objects.
func (s strategy[T, Spec, Status]) validateLimits(obj T, old *T) field.ErrorList {
	if s.limits == nil || s.limits.MaxReplicas <= 0 {
		return nil
	}
	counts := func(o T) map[string]*int32 {
		out := map[string]*int32{}
		if s.kind.NestedReplicas != nil {
			maps.Copy(out, s.kind.NestedReplicas(o))
		}
		if s.kind.Replicas != nil {
			out["replicas"] = s.kind.Replicas(o)
		}
		return out
	}
	var prev map[string]*int32
	if old != nil {
		prev = counts(*old)
	}
	var allErrs field.ErrorList
	now := counts(obj)
	for _, fld := range slices.Sorted(maps.Keys(now)) {
		replicas := now[fld]
		if replicas == nil || *replicas <= s.limits.MaxReplicas {
			continue
		}
		if p := prev[fld]; p != nil && *p == *replicas {
			continue
		}
		names := strings.Split(fld, ".")
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", names...), *replicas,
			fmt.Sprintf("must be no more than %d, the server's --max-replicas", s.limits.MaxReplicas)))
	}
	return allErrs
}

func (s strategy[T, Spec, Status]) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return s.warnings(obj)
}

func (s strategy[T, Spec, Status]) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return s.warnings(obj)
}

func (s strategy[T, Spec, Status]) warnings(obj runtime.Object) []string {
	if s.kind.Warnings == nil {
		return nil
	}
	return s.kind.Warnings(obj.(T))
}

func (strategy[T, Spec, Status]) Canonicalize(runtime.Object) {}

func (strategy[T, Spec, Status]) AllowCreateOnUpdate(context.Context) bool { return false }

func (strategy[T, Spec, Status]) AllowUnconditionalUpdate(context.Context) bool { return true }

// statusStrategy is the update strategy of the status subresource: it owns the status and
// ignores the spec and the metadata, as a CustomResourceDefinition's status subresource does.
type statusStrategy[T Object, Spec, Status any] struct {
	strategy[T, Spec, Status]
}

// GetResetFields says that the status endpoint never writes the spec, nor the metadata that
// a status write keeps (PrepareForUpdate), for server-side apply.
func (statusStrategy[T, Spec, Status]) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(operatorv1alpha1.SchemeGroupVersion.String()): fieldpath.NewSet(
			fieldpath.MakePathOrDie("spec"),
			fieldpath.MakePathOrDie("metadata", "labels"),
			fieldpath.MakePathOrDie("metadata", "annotations"),
			fieldpath.MakePathOrDie("metadata", "finalizers"),
			fieldpath.MakePathOrDie("metadata", "ownerReferences"),
		),
	}
}

// PrepareForUpdate keeps the stored spec and metadata, but the managed fields that record the
// write: labels, annotations, finalizers and owner references are what the main endpoint's
// checks hold (the adopt and delete-etcd-volumes annotations are rights, a finalizer holds
// the host's cleanup), and a writer of the status alone, such as a user granted only
// rootshards/status, passes none of them.
func (s statusStrategy[T, Spec, Status]) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	newObj, oldObj := obj.(T), old.(T)
	*s.kind.Spec(newObj) = *s.kind.Spec(oldObj)
	if s.kind.Conditions != nil {
		keepConditions(s.kind.Conditions(newObj), *s.kind.Conditions(oldObj))
	}
	newMeta, oldMeta := objectMeta(newObj), objectMeta(oldObj)
	if newMeta == nil || oldMeta == nil {
		// Not an ObjectMeta (no kind of ours): what metadata.Object sets is kept instead.
		newObj.SetLabels(oldObj.GetLabels())
		newObj.SetAnnotations(oldObj.GetAnnotations())
		newObj.SetFinalizers(oldObj.GetFinalizers())
		newObj.SetOwnerReferences(oldObj.GetOwnerReferences())
		newObj.SetGeneration(oldObj.GetGeneration())
		return
	}
	managed := newMeta.ManagedFields
	// The resourceVersion was checked against the stored one before, as the CRDs' status
	// strategy says.
	*newMeta = *oldMeta.DeepCopy()
	newMeta.ManagedFields = managed
}

// objectMeta is the ObjectMeta of o, or nil when o does not embed one.
func objectMeta(o metav1.Object) *metav1.ObjectMeta {
	a, ok := o.(metav1.ObjectMetaAccessor)
	if !ok {
		return nil
	}
	m, _ := a.GetObjectMeta().(*metav1.ObjectMeta)
	return m
}

func (s statusStrategy[T, Spec, Status]) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return s.kind.ValidateStatusUpdate(obj.(T), old.(T))
}

func (statusStrategy[T, Spec, Status]) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// keptConditions are the conditions the controllers record once and for good, which no
// status write changes or removes once stored: TakenOver ends a takeover, after which the
// annotation operator.kcp.io/adopt has no effect; a status writer who could drop it would
// have the next reconcile adopt again.
var keptConditions = []string{operatorv1alpha1.ConditionTakenOver}

// keepConditions puts the stored keptConditions back into conditions, as they were.
func keepConditions(conditions *[]metav1.Condition, stored []metav1.Condition) {
	for _, t := range keptConditions {
		if c := meta.FindStatusCondition(stored, t); c != nil {
			meta.RemoveStatusCondition(conditions, t)
			*conditions = append(*conditions, *c)
		}
	}
}
