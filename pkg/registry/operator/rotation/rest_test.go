package rotation

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// objects is a status store of one object that checks resourceVersions as etcd does; racer,
// when set, writes before the next update once, as the controller may.
type objects struct {
	obj     runtime.Object
	writes  int
	racer   func(runtime.Object)
	updates int
}

func (o *objects) New() runtime.Object { return &operator.RootShard{} }
func (o *objects) Destroy()            {}
func (o *objects) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if o.obj.(metav1.Object).GetName() != name {
		return nil, apierrors.NewNotFound(operator.Resource("rootshards"), name)
	}
	return o.obj.DeepCopyObject(), nil
}
func (o *objects) Update(ctx context.Context, name string, info rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc, _ rest.ValidateObjectUpdateFunc,
	_ bool, _ *metav1.UpdateOptions) (runtime.Object, bool, error) {
	o.updates++
	if o.racer != nil {
		o.racer(o.obj)
		o.racer = nil
		o.bump()
	}
	updated, err := info.UpdatedObject(ctx, o.obj)
	if err != nil {
		return nil, false, err
	}
	if updated.(metav1.Object).GetResourceVersion() != o.obj.(metav1.Object).GetResourceVersion() {
		return nil, false, apierrors.NewConflict(operator.Resource("rootshards"), name, assert.AnError)
	}
	o.obj = updated.DeepCopyObject()
	o.bump()
	o.writes++
	return o.obj, false, nil
}
func (o *objects) bump() {
	m := o.obj.(metav1.Object)
	rv, _ := strconv.Atoi(m.GetResourceVersion())
	m.SetResourceVersion(strconv.Itoa(rv + 1))
}

func rootShardStore(rotations ...operator.CARotationState) *objects {
	return &objects{obj: &operator.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a", ResourceVersion: "1"},
		Status: operator.RootShardStatus{Rotations: rotations}}}
}

func ctx(t *testing.T) context.Context { return genericapirequest.WithNamespace(t.Context(), "team-a") }

func request(phase operator.CARotationRequestPhase, authorities ...string) *operator.CARotation {
	return &operator.CARotation{Spec: operator.CARotationSpec{Authorities: authorities, Phase: phase}}
}

func TestCreateStartsAndCompletes(t *testing.T) {
	store := rootShardStore()
	r := &REST{Resource: operator.Resource("rootshards"), Status: store, Access: RootShards, Now: func() time.Time { return now }}

	out, err := r.Create(ctx(t), "root", request(operator.CARotationStart, "server", "client"), nil, &metav1.CreateOptions{})
	require.NoError(t, err)
	rot := out.(*operator.CARotation)
	assert.Equal(t, "root", rot.Name)
	require.Len(t, rot.Status.Rotations, 2)
	assert.Equal(t, "server", rot.Status.Rotations[0].Authority, "in the order asked for")
	assert.Equal(t, operator.CARotationPreparing, rot.Status.Rotations[0].Phase)
	stored := store.obj.(*operator.RootShard).Status.Rotations
	require.Len(t, stored, 2)
	assert.Equal(t, 1, store.writes)

	// Complete before Prepared: 409, and nothing written.
	_, err = r.Create(ctx(t), "root", request(operator.CARotationComplete, "server"), nil, &metav1.CreateOptions{})
	require.True(t, apierrors.IsConflict(err), "got %v", err)
	assert.Contains(t, err.Error(), "Preparing")
	assert.Equal(t, 1, store.writes)

	// The controller says Prepared; Complete now writes Completing.
	for i := range store.obj.(*operator.RootShard).Status.Rotations {
		store.obj.(*operator.RootShard).Status.Rotations[i].Phase = operator.CARotationPrepared
	}
	out, err = r.Create(ctx(t), "root", request(operator.CARotationComplete, "server", "client"), nil, &metav1.CreateOptions{})
	require.NoError(t, err)
	for _, s := range out.(*operator.CARotation).Status.Rotations {
		assert.Equal(t, operator.CARotationCompleting, s.Phase, s.Authority)
	}
	assert.Equal(t, 2, store.writes)
}

// TestCreateRetriesOnAConcurrentWrite: a status write in between (the controller's) is
// taken into account, never overwritten.
func TestCreateRetriesOnAConcurrentWrite(t *testing.T) {
	store := rootShardStore()
	store.racer = func(obj runtime.Object) {
		obj.(*operator.RootShard).Status.Phase = operator.PhaseRunning
	}
	r := &REST{Resource: operator.Resource("rootshards"), Status: store, Access: RootShards}
	_, err := r.Create(ctx(t), "root", request(operator.CARotationStart, "client"), nil, &metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, 2, store.updates, "the first update conflicted")
	got := store.obj.(*operator.RootShard)
	assert.Equal(t, operator.PhaseRunning, got.Status.Phase, "the concurrent write stays")
	require.Len(t, got.Status.Rotations, 1)
}

func TestCreateDryRunWritesNothing(t *testing.T) {
	store := rootShardStore()
	r := &REST{Resource: operator.Resource("rootshards"), Status: store, Access: RootShards}
	out, err := r.Create(ctx(t), "root", request(operator.CARotationStart, "client"), nil, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	require.NoError(t, err)
	assert.Len(t, out.(*operator.CARotation).Status.Rotations, 1)
	assert.Zero(t, store.writes)
}

// TestCreateRefuses has one case per bad request: 4xx with field paths.
func TestCreateRefuses(t *testing.T) {
	csWithCA := &objects{obj: &operator.CacheServer{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a", ResourceVersion: "1"},
		Spec: operator.CacheServerSpec{Certificates: &operator.Certificates{CASecretRef: &corev1.LocalObjectReference{Name: "my-ca"}}}}}
	rsWithCA := rootShardStore()
	rsWithCA.obj.(*operator.RootShard).Spec.Certificates = &operator.Certificates{CASecretRef: &corev1.LocalObjectReference{Name: "my-root-ca"}}
	tests := []struct {
		name   string
		store  *objects
		access Access
		req    *operator.CARotation
		check  func(error) bool
		says   []string
	}{
		{name: "no phase", req: request("", "client"), check: apierrors.IsInvalid, says: []string{"spec.phase: Required value"}},
		{name: "unknown phase", req: request("Now", "client"), check: apierrors.IsInvalid, says: []string{`spec.phase: Unsupported value: "Now"`}},
		{name: "no authority", req: request(operator.CARotationStart), check: apierrors.IsInvalid, says: []string{"spec.authorities: Required value"}},
		{name: "unknown authority", req: request(operator.CARotationStart, "client", "kubelet"), check: apierrors.IsInvalid,
			says: []string{`spec.authorities[1]: Unsupported value: "kubelet"`}},
		{name: "duplicate authority", req: request(operator.CARotationStart, "client", "client"), check: apierrors.IsInvalid,
			says: []string{`spec.authorities[1]: Duplicate value: "client"`}},
		{name: "another object's name", req: &operator.CARotation{ObjectMeta: metav1.ObjectMeta{Name: "other"},
			Spec: operator.CARotationSpec{Authorities: []string{"client"}, Phase: operator.CARotationStart}},
			check: apierrors.IsBadRequest, says: []string{"metadata.name"}},
		{name: "a CacheServer's own CA Secret", store: csWithCA, access: CacheServers, req: request(operator.CARotationStart, "ca"),
			check: apierrors.IsInvalid, says: []string{"spec.authorities[0]", "caSecretRef"}},
		{name: "a member of a CacheServer", store: &objects{obj: &operator.CacheServer{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a", ResourceVersion: "1"}}},
			access: CacheServers, req: excluding(request(operator.CARotationStart, "ca"), operator.CARotationMember{Kind: "Shard", Name: "s"}),
			check: apierrors.IsInvalid, says: []string{"spec.excludeMembers: Forbidden"}},
		{name: "a member of an unknown kind", req: excluding(request(operator.CARotationStart, "client"), operator.CARotationMember{Kind: "Pod", Name: "p"}),
			check: apierrors.IsInvalid, says: []string{`spec.excludeMembers[0].kind: Unsupported value: "Pod"`}},
		{name: "a RootShard's own root CA Secret", store: rsWithCA, access: RootShards, req: request(operator.CARotationStart, "client", "root"),
			check: apierrors.IsInvalid, says: []string{"spec.authorities[1]", "caSecretRef", "my-root-ca"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, access := tt.store, tt.access
			if store == nil {
				store, access = rootShardStore(), RootShards
			}
			r := &REST{Resource: operator.Resource("rootshards"), Status: store, Access: access}
			_, err := r.Create(ctx(t), "root", tt.req, nil, &metav1.CreateOptions{})
			require.Error(t, err)
			assert.True(t, tt.check(err), "got %v", err)
			for _, s := range tt.says {
				assert.Contains(t, err.Error(), s)
			}
			assert.Zero(t, store.writes)
		})
	}
}

// The root CA the server issues, from the namespace bootstrap or the user's issuerRef, is
// rotated as any other; with caSecretRef, its intermediates are still the server's.
func TestCreateStartsTheRootCA(t *testing.T) {
	for name, c := range map[string]*operator.Certificates{
		"bootstrap": nil,
		"issuerRef": {IssuerRef: &operator.ObjectReference{Name: "my-issuer", Kind: "Issuer"}},
	} {
		t.Run(name, func(t *testing.T) {
			store := rootShardStore()
			store.obj.(*operator.RootShard).Spec.Certificates = c
			r := &REST{Resource: operator.Resource("rootshards"), Status: store, Access: RootShards}
			out, err := r.Create(ctx(t), "root", request(operator.CARotationStart, "root"), nil, &metav1.CreateOptions{})
			require.NoError(t, err)
			require.Len(t, out.(*operator.CARotation).Status.Rotations, 1)
			assert.Equal(t, operator.CARotationPreparing, out.(*operator.CARotation).Status.Rotations[0].Phase)
			assert.Equal(t, 1, store.writes)
		})
	}
	store := rootShardStore()
	store.obj.(*operator.RootShard).Spec.Certificates = &operator.Certificates{CASecretRef: &corev1.LocalObjectReference{Name: "my-root-ca"}}
	r := &REST{Resource: operator.Resource("rootshards"), Status: store, Access: RootShards}
	_, err := r.Create(ctx(t), "root", request(operator.CARotationStart, "client"), nil, &metav1.CreateOptions{})
	require.NoError(t, err, "the intermediates below the user's root CA are the server's")
}

func TestCreateOnAMissingObject(t *testing.T) {
	r := &REST{Resource: operator.Resource("rootshards"), Status: rootShardStore(), Access: RootShards}
	_, err := r.Create(ctx(t), "nope", request(operator.CARotationStart, "client"), nil, &metav1.CreateOptions{})
	assert.True(t, apierrors.IsNotFound(err), "got %v", err)
}

func excluding(req *operator.CARotation, members ...operator.CARotationMember) *operator.CARotation {
	req.Spec.ExcludeMembers = members
	return req
}

// TestCreateExcludesMembers: Start records the members a rotation does not wait for, and
// Start again while it prepares adds to them, in status.rotations.
func TestCreateExcludesMembers(t *testing.T) {
	store := rootShardStore()
	r := &REST{Resource: operator.Resource("rootshards"), Status: store, Access: RootShards, Now: func() time.Time { return now }}
	fp := operator.CARotationMember{Kind: "FrontProxy", Name: "fp"}
	vw := operator.CARotationMember{Kind: "VirtualWorkspace", Name: "vw"}
	_, err := r.Create(ctx(t), "root", excluding(request(operator.CARotationStart, "client"), fp), nil, &metav1.CreateOptions{})
	require.NoError(t, err)
	out, err := r.Create(ctx(t), "root", excluding(request(operator.CARotationStart, "client", "server"), vw), nil, &metav1.CreateOptions{})
	require.NoError(t, err)
	got := out.(*operator.CARotation).Status.Rotations
	require.Len(t, got, 2)
	assert.Equal(t, []operator.CARotationMember{fp, vw}, got[0].ExcludedMembers)
	assert.Equal(t, []operator.CARotationMember{vw}, got[1].ExcludedMembers)
	stored := store.obj.(*operator.RootShard).Status.Rotations
	assert.Equal(t, []operator.CARotationMember{fp, vw}, stored[0].ExcludedMembers, "stored for the client CA")
	assert.Equal(t, 2, store.writes)
}

// TestCreateRotatesTheLinkCAOfALinkedRootShard: the link CA rotates like every other CA,
// but only while a Link names the RootShard: without one there is no link CA (422 at its
// path); a failure to read the Links is no refusal.
func TestCreateRotatesTheLinkCAOfALinkedRootShard(t *testing.T) {
	linked := false
	var failure error
	asked := ""
	r := &REST{Resource: operator.Resource("rootshards"), Status: rootShardStore(), Access: RootShards, Now: func() time.Time { return now },
		Linked: func(_ context.Context, namespace, name string) (bool, error) {
			asked = namespace + "/" + name
			return linked, failure
		}}

	_, err := r.Create(ctx(t), "root", request(operator.CARotationStart, "server", "link"), nil, &metav1.CreateOptions{})
	require.True(t, apierrors.IsInvalid(err), "got %v", err)
	assert.Contains(t, err.Error(), "spec.authorities[1]")
	assert.Contains(t, err.Error(), "no Link names the RootShard")
	assert.Equal(t, "team-a/root", asked)

	failure = errors.New("the Links' storage is down")
	_, err = r.Create(ctx(t), "root", request(operator.CARotationStart, "link"), nil, &metav1.CreateOptions{})
	require.Error(t, err)
	assert.False(t, apierrors.IsInvalid(err), "not the request's fault: %v", err)

	linked, failure = true, nil
	out, err := r.Create(ctx(t), "root", request(operator.CARotationStart, "link"), nil, &metav1.CreateOptions{})
	require.NoError(t, err)
	require.Len(t, out.(*operator.CARotation).Status.Rotations, 1)
	assert.Equal(t, operator.CARotationPreparing, out.(*operator.CARotation).Status.Rotations[0].Phase)

	cacheServers := &REST{Resource: operator.Resource("cacheservers"), Status: rootShardStore(), Access: CacheServers}
	_, err = cacheServers.Create(ctx(t), "root", request(operator.CARotationStart, "link"), nil, &metav1.CreateOptions{})
	assert.True(t, apierrors.IsInvalid(err), "a CacheServer has no link CA: %v", err)
}
