package backup

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

var now = time.Date(2026, 11, 29, 1, 15, 0, 0, time.UTC)

// objects is a status store of one object that checks resourceVersions as etcd does; racer,
// when set, writes before the next update once, as the controller may. It records whether
// each update came marked as the backup subresource's and whether it was a dry run.
type objects struct {
	obj     runtime.Object
	writes  int
	updates int
	racer   func(runtime.Object)
	marked  []bool
	dryRun  []bool
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
	_ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	o.updates++
	o.marked = append(o.marked, marked(ctx))
	o.dryRun = append(o.dryRun, len(options.DryRun) > 0)
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
	if len(options.DryRun) > 0 {
		return updated, false, nil
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

// marked reports whether ctx is the backup subresource's write, as the status store asks.
func marked(ctx context.Context) bool {
	return store.WrittenBy(ctx, store.BackupSubresource)
}

func ctx(t *testing.T) context.Context { return genericapirequest.WithNamespace(t.Context(), "team-a") }

func backedUp() operator.EtcdConfig {
	return operator.EtcdConfig{Managed: &operator.ManagedEtcd{Backup: &operator.EtcdBackup{}}}
}

func rootShard(etcd operator.EtcdConfig, status *operator.ManagedEtcdStatus) *objects {
	rs := &operator.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a", ResourceVersion: "1"}}
	rs.Spec.Etcd, rs.Status.Etcd = etcd, status
	return &objects{obj: rs}
}

func stored(o *objects) *operator.ManagedEtcdStatus { return o.obj.(*operator.RootShard).Status.Etcd }

func TestCreateAsksForASnapshot(t *testing.T) {
	members := []operator.EtcdMemberStatus{{Name: "root-etcd-0", Leader: true}}
	objects := rootShard(backedUp(), &operator.ManagedEtcdStatus{Members: members})
	r := &REST{Resource: operator.Resource("rootshards"), Status: objects, Access: RootShards, Now: func() time.Time { return now }}

	out, err := r.Create(ctx(t), "root", &operator.EtcdSnapshotRequest{Status: operator.EtcdSnapshotRequestStatus{Snapshot: "chosen-by-the-client"}}, nil, &metav1.CreateOptions{})
	require.NoError(t, err)
	req := out.(*operator.EtcdSnapshotRequest)
	assert.Equal(t, "root", req.Name)
	assert.Equal(t, "team-a", req.Namespace)
	assert.Equal(t, "root-20261129-011500", req.Status.Snapshot, "the server's name, never the client's")
	require.NotNil(t, req.Status.RequestTime)
	assert.True(t, now.Equal(req.Status.RequestTime.Time))

	require.NotNil(t, stored(objects).PendingSnapshot)
	assert.Equal(t, operator.EtcdPendingSnapshot{Name: "root-20261129-011500", RequestTime: metav1.NewTime(now)}, *stored(objects).PendingSnapshot)
	assert.Equal(t, members, stored(objects).Members, "the members' status stays")
	assert.Equal(t, []bool{true}, objects.marked, "written as the backup subresource's")
	assert.Equal(t, 1, objects.writes)

	// Asked again before the controller took it: 409 naming it, nothing written.
	_, err = r.Create(ctx(t), "root", &operator.EtcdSnapshotRequest{}, nil, &metav1.CreateOptions{})
	require.True(t, apierrors.IsConflict(err), "got %v", err)
	assert.Contains(t, err.Error(), "root-20261129-011500")
	assert.Equal(t, 1, objects.updates, "a pending snapshot is refused, not retried")

	// Taken and listed: the next request, in the same second, gets a name of its own.
	objects.obj.(*operator.RootShard).Status.Etcd = &operator.ManagedEtcdStatus{
		Snapshots: []operator.EtcdSnapshotInfo{{Name: "root-20261129-011500", OnDemand: true}}}
	out, err = r.Create(ctx(t), "root", &operator.EtcdSnapshotRequest{}, nil, &metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "root-20261129-011500-1", out.(*operator.EtcdSnapshotRequest).Status.Snapshot)
}

// TestCreateOnAShard: a Shard's snapshots are named after its etcd, <s>-shard, and an etcd
// without any status yet gets one.
func TestCreateOnAShard(t *testing.T) {
	s := &operator.Shard{ObjectMeta: metav1.ObjectMeta{Name: "alpha", Namespace: "team-a", ResourceVersion: "1"}}
	s.Spec.Etcd = backedUp()
	objects := &objects{obj: s}
	r := &REST{Resource: operator.Resource("shards"), Status: objects, Access: Shards, Now: func() time.Time { return now }}
	out, err := r.Create(ctx(t), "alpha", &operator.EtcdSnapshotRequest{}, nil, &metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "alpha-shard-20261129-011500", out.(*operator.EtcdSnapshotRequest).Status.Snapshot)
	got := objects.obj.(*operator.Shard).Status.Etcd
	require.NotNil(t, got)
	require.NotNil(t, got.PendingSnapshot)
	assert.Equal(t, "alpha-shard-20261129-011500", got.PendingSnapshot.Name)
}

// TestCreateRefuses: one row per refusal, each with its code and field path; nothing is
// written.
func TestCreateRefuses(t *testing.T) {
	deleting := rootShard(backedUp(), nil)
	deleting.obj.(*operator.RootShard).DeletionTimestamp = &metav1.Time{Time: now}
	for _, tc := range []struct {
		name    string
		objects *objects
		url     string
		body    *operator.EtcdSnapshotRequest
		is      func(error) bool
		says    string
	}{
		{"an external etcd", rootShard(operator.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}, nil), "root", &operator.EtcdSnapshotRequest{},
			apierrors.IsInvalid, `RootShard.operator.kcp.io "root" is invalid: spec.etcd.endpoints: Forbidden: the etcd is one the server does not run`},
		{"no backup configured", rootShard(operator.EtcdConfig{Managed: &operator.ManagedEtcd{}}, nil), "root", &operator.EtcdSnapshotRequest{},
			apierrors.IsInvalid, `spec.etcd.managed.backup: Required value: the managed etcd has no store for snapshots`},
		{"being deleted", deleting, "root", &operator.EtcdSnapshotRequest{}, apierrors.IsConflict, "the RootShard is being deleted"},
		{"no such object", rootShard(backedUp(), nil), "other", &operator.EtcdSnapshotRequest{}, apierrors.IsNotFound, `"other" not found`},
		{"a body naming another object", rootShard(backedUp(), nil), "root",
			&operator.EtcdSnapshotRequest{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, apierrors.IsBadRequest, "the name in the URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &REST{Resource: operator.Resource("rootshards"), Status: tc.objects, Access: RootShards, Now: func() time.Time { return now }}
			before := tc.objects.obj.DeepCopyObject()
			_, err := r.Create(ctx(t), tc.url, tc.body, nil, &metav1.CreateOptions{})
			require.Error(t, err)
			assert.True(t, tc.is(err), "got %v", err)
			assert.Contains(t, err.Error(), tc.says)
			assert.Zero(t, tc.objects.updates, "nothing written")
			assert.Equal(t, before, tc.objects.obj)
		})
	}
}

// TestCreateRetriesOnAConcurrentWrite: a status write in between (the controller's) is
// taken into account, never overwritten; one that lists a snapshot of the same second
// gives the request another name.
func TestCreateRetriesOnAConcurrentWrite(t *testing.T) {
	objects := rootShard(backedUp(), nil)
	objects.racer = func(obj runtime.Object) {
		obj.(*operator.RootShard).Status.Etcd = &operator.ManagedEtcdStatus{Snapshots: []operator.EtcdSnapshotInfo{{Name: "root-20261129-011500"}}}
	}
	r := &REST{Resource: operator.Resource("rootshards"), Status: objects, Access: RootShards, Now: func() time.Time { return now }}
	out, err := r.Create(ctx(t), "root", &operator.EtcdSnapshotRequest{}, nil, &metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, 2, objects.updates, "the first update conflicted")
	assert.Equal(t, "root-20261129-011500-1", out.(*operator.EtcdSnapshotRequest).Status.Snapshot)
	got := stored(objects)
	require.Len(t, got.Snapshots, 1, "the controller's write is kept")
	assert.Equal(t, "root-20261129-011500-1", got.PendingSnapshot.Name)
}

// TestCreateDryRun: the request is checked and answered, and the write goes to the store as
// a dry run, which stores nothing.
func TestCreateDryRun(t *testing.T) {
	objects := rootShard(backedUp(), nil)
	r := &REST{Resource: operator.Resource("rootshards"), Status: objects, Access: RootShards, Now: func() time.Time { return now }}
	out, err := r.Create(ctx(t), "root", &operator.EtcdSnapshotRequest{}, nil, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	require.NoError(t, err)
	assert.Equal(t, "root-20261129-011500", out.(*operator.EtcdSnapshotRequest).Status.Snapshot)
	assert.Equal(t, []bool{true}, objects.dryRun)
	assert.Nil(t, stored(objects), "nothing stored")
}
