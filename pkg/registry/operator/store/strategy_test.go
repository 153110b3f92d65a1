package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// testKind is a Kind over CacheServers with validation that records its calls.
func testKind() *Kind[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus] {
	return &Kind[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{
		Resource: operator.Resource("cacheservers"),
		Singular: operator.Resource("cacheserver"),
		New:      func() *operator.CacheServer { return &operator.CacheServer{} },
		NewList:  func() runtime.Object { return &operator.CacheServerList{} },
		Spec:     func(o *operator.CacheServer) *operator.CacheServerSpec { return &o.Spec },
		Status:   func(o *operator.CacheServer) *operator.CacheServerStatus { return &o.Status },
		Validate: func(*operator.CacheServer) field.ErrorList {
			return field.ErrorList{field.Invalid(field.NewPath("spec"), "x", "create")}
		},
		ValidateUpdate: func(_, _ *operator.CacheServer) field.ErrorList {
			return field.ErrorList{field.Invalid(field.NewPath("spec"), "x", "update")}
		},
		ValidateStatusUpdate: func(_, _ *operator.CacheServer) field.ErrorList {
			return field.ErrorList{field.Invalid(field.NewPath("status"), "x", "status")}
		},
	}
}

func cacheServer(replicas int32, phase operator.Phase) *operator.CacheServer {
	return &operator.CacheServer{
		ObjectMeta: metav1.ObjectMeta{Name: "cs", Namespace: "ns", Generation: 3},
		Spec:       operator.CacheServerSpec{ComponentSpec: operator.ComponentSpec{Replicas: ptr.To(replicas)}},
		Status:     operator.CacheServerStatus{Phase: phase, ObservedGeneration: 3},
	}
}

func TestPrepareForCreateDropsStatusAndStartsGeneration(t *testing.T) {
	s := strategy[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{kind: testKind()}
	obj := cacheServer(1, operator.PhaseRunning)
	s.PrepareForCreate(t.Context(), obj)
	assert.Equal(t, operator.CacheServerStatus{}, obj.Status)
	assert.EqualValues(t, 1, obj.Generation)
	assert.Equal(t, ptr.To[int32](1), obj.Spec.Replicas)
}

func TestPrepareForUpdate(t *testing.T) {
	s := strategy[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{kind: testKind()}
	for _, tc := range []struct {
		name           string
		newObj         *operator.CacheServer
		wantGeneration int64
	}{
		{"spec change bumps the generation", cacheServer(2, operator.PhaseDeleting), 4},
		{"status change alone is ignored", cacheServer(1, operator.PhaseDeleting), 3},
		{"metadata change keeps the generation", func() *operator.CacheServer {
			o := cacheServer(1, operator.PhaseRunning)
			o.Labels = map[string]string{"a": "b"}
			return o
		}(), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := cacheServer(1, operator.PhaseRunning)
			s.PrepareForUpdate(t.Context(), tc.newObj, old)
			assert.Equal(t, tc.wantGeneration, tc.newObj.Generation)
			assert.Equal(t, old.Status, tc.newObj.Status, "the main endpoint keeps the stored status")
		})
	}
}

func TestStatusPrepareForUpdateKeepsSpecAndGeneration(t *testing.T) {
	s := statusStrategy[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{
		strategy: strategy[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{kind: testKind()},
	}
	old := cacheServer(1, operator.PhaseProvisioning)
	newObj := cacheServer(5, operator.PhaseRunning)
	newObj.Generation = 9
	s.PrepareForUpdate(t.Context(), newObj, old)
	assert.Equal(t, ptr.To[int32](1), newObj.Spec.Replicas, "the status endpoint keeps the stored spec")
	assert.EqualValues(t, 3, newObj.Generation)
	assert.Equal(t, operator.PhaseRunning, newObj.Status.Phase)
}

// TestStatusWriteKeepsTheStoredMetadata: a write of the status subresource stores the status
// it brings and the stored metadata, as a CustomResourceDefinition's status does, whatever
// metadata it brings; only its managed fields, which record the write, are its own.
func TestStatusWriteKeepsTheStoredMetadata(t *testing.T) {
	s := statusStrategy[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{
		strategy: strategy[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{kind: testKind()},
	}
	stored := func() *operator.CacheServer {
		o := cacheServer(1, operator.PhaseProvisioning)
		o.Labels = map[string]string{"team": "a"}
		o.Annotations = map[string]string{"note": "kept"}
		o.Finalizers = []string{"operator.kcp.io/cacheserver"}
		o.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "u1"}}
		return o
	}
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}}
	for _, tc := range []struct {
		name  string
		write func(o *operator.CacheServer)
	}{
		{"an adopt annotation", func(o *operator.CacheServer) { o.Annotations["operator.kcp.io/adopt"] = "anything" }},
		{"a delete-etcd-volumes annotation", func(o *operator.CacheServer) { o.Annotations["operator.kcp.io/delete-etcd-volumes"] = "true" }},
		{"annotations dropped", func(o *operator.CacheServer) { o.Annotations = nil }},
		{"a label", func(o *operator.CacheServer) { o.Labels["operator.kcp.io/reference"] = "x" }},
		{"labels dropped", func(o *operator.CacheServer) { o.Labels = nil }},
		{"finalizers dropped", func(o *operator.CacheServer) { o.Finalizers = nil }},
		{"a finalizer added", func(o *operator.CacheServer) { o.Finalizers = append(o.Finalizers, "x/y") }},
		{"owner references changed", func(o *operator.CacheServer) { o.OwnerReferences = nil }},
		{"the generation", func(o *operator.CacheServer) { o.Generation = 9 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := stored()
			newObj := stored()
			newObj.Status.Phase = operator.PhaseRunning
			newObj.ManagedFields = managed
			tc.write(newObj)
			s.PrepareForUpdate(t.Context(), newObj, old)
			want := old.ObjectMeta.DeepCopy()
			want.ManagedFields = managed
			assert.Equal(t, *want, newObj.ObjectMeta, "the stored metadata, with the write's managed fields")
			assert.Equal(t, operator.PhaseRunning, newObj.Status.Phase, "the status is the write's")
		})
	}
}

func TestStrategiesCallTheirValidation(t *testing.T) {
	main := strategy[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{kind: testKind(), NameGenerator: names.SimpleNameGenerator}
	status := statusStrategy[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{strategy: main}
	obj := cacheServer(1, "")
	require.Len(t, main.Validate(t.Context(), obj), 1)
	assert.Equal(t, "create", main.Validate(t.Context(), obj)[0].Detail)
	assert.Equal(t, "update", main.ValidateUpdate(t.Context(), obj, obj)[0].Detail)
	assert.Equal(t, "status", status.ValidateUpdate(t.Context(), obj, obj)[0].Detail)
}

func TestResetFields(t *testing.T) {
	main := strategy[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{kind: testKind()}
	status := statusStrategy[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{strategy: main}
	v := fieldpath.APIVersion("operator.kcp.io/v1alpha1")
	assert.True(t, main.GetResetFields()[v].Has(fieldpath.MakePathOrDie("status")))
	assert.False(t, main.GetResetFields()[v].Has(fieldpath.MakePathOrDie("spec")))
	assert.True(t, status.GetResetFields()[v].Has(fieldpath.MakePathOrDie("spec")))
	for _, f := range []string{"labels", "annotations", "finalizers", "ownerReferences"} {
		assert.True(t, status.GetResetFields()[v].Has(fieldpath.MakePathOrDie("metadata", f)), f)
	}
	assert.False(t, status.GetResetFields()[v].Has(fieldpath.MakePathOrDie("status")))
}

func TestAttrsExposeSelectableFields(t *testing.T) {
	k := testKind()
	_, fs, err := k.attrs(cacheServer(1, ""))
	require.NoError(t, err)
	assert.Equal(t, "cs", fs["metadata.name"])
	assert.Equal(t, "ns", fs["metadata.namespace"])
	assert.NotContains(t, fs, "spec.rootShard.ref.name")

	k.SelectableFields = func(*operator.CacheServer) fields.Set { return fields.Set{"spec.x": "y"} }
	_, fs, err = k.attrs(cacheServer(1, ""))
	require.NoError(t, err)
	assert.Equal(t, "y", fs["spec.x"])

	_, _, err = k.attrs(&operator.Shard{})
	assert.Error(t, err, "an object of another kind is an error, not a panic")
}

// TestReplicasAreBoundedByTheServer: spec.replicas above --max-replicas is a 422 naming the
// field and the bound, on create and on an update that changes the count; an update that
// keeps an over-bound count (set before the bound was lowered) passes.
func TestReplicasAreBoundedByTheServer(t *testing.T) {
	kind := testKind()
	kind.Validate = func(*operator.CacheServer) field.ErrorList { return nil }
	kind.ValidateUpdate = func(_, _ *operator.CacheServer) field.ErrorList { return nil }
	kind.Replicas = func(o *operator.CacheServer) *int32 { return o.Spec.Replicas }
	s := strategy[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{kind: kind, limits: &Limits{MaxReplicas: 100}}

	assert.Empty(t, s.Validate(t.Context(), cacheServer(100, "")))
	errs := s.Validate(t.Context(), cacheServer(2000000000, ""))
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.replicas", errs[0].Field)
	assert.Contains(t, errs[0].Error(), "must be no more than 100, the server's --max-replicas")

	assert.Len(t, s.ValidateUpdate(t.Context(), cacheServer(101, ""), cacheServer(3, "")), 1, "raised above the bound")
	assert.Empty(t, s.ValidateUpdate(t.Context(), cacheServer(500, ""), cacheServer(500, "")), "kept as it was")
	assert.Empty(t, s.ValidateUpdate(t.Context(), cacheServer(50, ""), cacheServer(500, "")), "lowered under the bound")
}

// TestNestedReplicasAreBoundedByTheServer: a further workload's pod count (a RootShard's
// spec.proxy.replicas) is under the same --max-replicas, at its own path.
func TestNestedReplicasAreBoundedByTheServer(t *testing.T) {
	kind := testKind()
	kind.Validate = func(*operator.CacheServer) field.ErrorList { return nil }
	kind.ValidateUpdate = func(_, _ *operator.CacheServer) field.ErrorList { return nil }
	kind.Replicas = func(o *operator.CacheServer) *int32 { return o.Spec.Replicas }
	// The CacheServer's own count stands in for a nested one, so that both are bound at once.
	kind.NestedReplicas = func(o *operator.CacheServer) map[string]*int32 {
		return map[string]*int32{"proxy.replicas": o.Spec.Replicas}
	}
	s := strategy[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{kind: kind, limits: &Limits{MaxReplicas: 100}}

	errs := s.Validate(t.Context(), cacheServer(2000000000, ""))
	require.Len(t, errs, 2)
	assert.Equal(t, "spec.proxy.replicas", errs[0].Field)
	assert.Contains(t, errs[0].Error(), "must be no more than 100, the server's --max-replicas")
	assert.Equal(t, "spec.replicas", errs[1].Field)
	assert.Empty(t, s.ValidateUpdate(t.Context(), cacheServer(500, ""), cacheServer(500, "")), "kept as it was")
	assert.Len(t, s.ValidateUpdate(t.Context(), cacheServer(501, ""), cacheServer(500, "")), 2, "raised")
}

// TestNormalizeBeforeValidation: the kind's Normalize rewrites what a client sent on create
// and on update, and a spec that normalizes to the stored one is no change of the generation.
func TestNormalizeBeforeValidation(t *testing.T) {
	kind := testKind()
	kind.Normalize = func(o *operator.CacheServer) {
		o.Spec.Certificates = operator.WithoutEmptyCertificates(o.Spec.Certificates)
	}
	s := strategy[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{kind: kind}

	created := cacheServer(1, "")
	created.Spec.Certificates = &operator.Certificates{}
	s.PrepareForCreate(t.Context(), created)
	assert.Nil(t, created.Spec.Certificates, "certificates: {} is stored as unset")

	updated := created.DeepCopy()
	updated.Spec.Certificates = &operator.Certificates{}
	s.PrepareForUpdate(t.Context(), updated, created)
	assert.Nil(t, updated.Spec.Certificates)
	assert.Equal(t, created.Generation, updated.Generation, "the same spec: no new generation")

	withIssuer := created.DeepCopy()
	withIssuer.Spec.Certificates = &operator.Certificates{IssuerRef: &operator.ObjectReference{Name: "ca"}}
	s.PrepareForUpdate(t.Context(), withIssuer, created)
	assert.Equal(t, "ca", withIssuer.Spec.Certificates.IssuerRef.Name, "a source is kept")
	assert.Equal(t, created.Generation+1, withIssuer.Generation)
}

// TestStatusWriteKeepsTakenOver: TakenOver, once stored, is what ends a takeover; a writer of
// the status alone (sam, with rootshards/status) who drops it or sets it False would have the
// next reconcile adopt again, so a status write keeps it as stored. A write that records it
// first (the controllers') stores it.
func TestStatusWriteKeepsTakenOver(t *testing.T) {
	k := testKind()
	k.Conditions = func(o *operator.CacheServer) *[]metav1.Condition { return &o.Status.Conditions }
	s := statusStrategy[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{
		strategy: strategy[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{kind: k},
	}
	takenOver := metav1.Condition{Type: operatorv1alpha1.ConditionTakenOver, Status: metav1.ConditionTrue,
		Reason: operatorv1alpha1.ReasonTakenOverFromKcpOperator, LastTransitionTime: metav1.Unix(100, 0)}
	available := metav1.Condition{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "Ready"}
	for _, tc := range []struct {
		name   string
		stored []metav1.Condition
		write  []metav1.Condition
		want   []metav1.Condition
	}{
		{"dropped", []metav1.Condition{available, takenOver}, []metav1.Condition{available}, []metav1.Condition{available, takenOver}},
		{"all dropped", []metav1.Condition{available, takenOver}, nil, []metav1.Condition{takenOver}},
		{"set False", []metav1.Condition{takenOver},
			[]metav1.Condition{{Type: operatorv1alpha1.ConditionTakenOver, Status: metav1.ConditionFalse, Reason: "X"}}, []metav1.Condition{takenOver}},
		{"recorded first", []metav1.Condition{available}, []metav1.Condition{available, takenOver}, []metav1.Condition{available, takenOver}},
		{"other conditions are the write's", []metav1.Condition{available, takenOver}, []metav1.Condition{takenOver}, []metav1.Condition{takenOver}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := cacheServer(1, operator.PhaseRunning)
			old.Status.Conditions = tc.stored
			newObj := cacheServer(1, operator.PhaseRunning)
			newObj.Status.Conditions = tc.write
			s.PrepareForUpdate(t.Context(), newObj, old)
			assert.ElementsMatch(t, tc.want, newObj.Status.Conditions)
		})
	}
}
