package rootshard

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// TestARestoreStartsNothingBeforeItsSnapshotPassesItsCheck: a RootShard whose managed etcd
// restores a snapshot creates no StatefulSet (and no empty cluster) until the snapshot passed
// its check; then the members restore it in an init container, which goes once every
// member is ready, and EtcdRestored turns True.
func TestARestoreStartsNothingBeforeItsSnapshotPassesItsCheck(t *testing.T) {
	rs := testRootShard()
	rs.Spec.Etcd = operatorv1alpha1.EtcdConfig{Managed: &operatorv1alpha1.ManagedEtcd{
		Backup:  &operatorv1alpha1.EtcdBackup{Store: operatorv1alpha1.EtcdSnapshotStore{Volume: &operatorv1alpha1.EtcdSnapshotVolume{}}},
		Restore: &operatorv1alpha1.EtcdRestore{Snapshot: "root-20261128-101500"},
	}}
	f := newFixture(t, rs)
	f.Host.StoreStatefulSets(t)
	f.c.Host.EtcdAgentImage = "ghcr.io/kcp-setups/apiserver:v1"
	restored := func() *metav1.Condition {
		got, err := kinds.RootShard.Lister(f.c.Indexes, "team-a").Get("root")
		require.NoError(t, err)
		return meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionEtcdRestored)
	}
	sync := func() {
		require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
		f.hostCatchesUp(t)
	}
	for range 4 {
		sync()
	}
	assert.Empty(t, f.Host.Caches["statefulsets"].List(), "nothing starts before the snapshot passed its check")
	c := restored()
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Contains(t, []string{operatorv1alpha1.ReasonRestoreVerifying, operatorv1alpha1.ReasonRestoreSourceUnavailable}, c.Reason,
		"the fixture has no agent to answer: %s", c.Message)

	// The snapshot passed its check (as the agent would answer).
	answered := make(chan struct{})
	f.c.Host.EtcdRestores.Forget("team-a/root-etcd/root-20261128-101500")
	f.c.Host.EtcdRestores.Check("team-a/root-etcd/root-20261128-101500", func(context.Context) error { return nil }, func() { close(answered) })
	<-answered
	sync()
	sts := f.Host.Caches["statefulsets"].List()
	require.Len(t, sts, 1, "the StatefulSet is created once the snapshot passed")
	snapshot, ok := etcd.RestoringSnapshot(sts[0].(*appsv1.StatefulSet))
	assert.True(t, ok, "its members restore the snapshot before etcd starts")
	assert.Equal(t, "root-20261128-101500", snapshot)
	assert.Equal(t, operatorv1alpha1.ReasonRestoring, restored().Reason)

	// Every member ready: the init container goes, and the restore is done.
	f.Host.CatchUpStatefulSets(t)
	sync()
	f.Host.CatchUpStatefulSets(t)
	sync()
	_, ok = etcd.RestoringSnapshot(f.Host.Caches["statefulsets"].List()[0].(*appsv1.StatefulSet))
	assert.False(t, ok, "the restore init container goes once every member started")
	c = restored()
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Equal(t, operatorv1alpha1.ReasonRestored, c.Reason)
}
