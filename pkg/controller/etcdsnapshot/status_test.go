package etcdsnapshot

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup/agent"
)

// TestApply: a take's result moves lastScheduleTime forward (never back, never for a failed
// take), clears the pending snapshot it took (also one found taken before), not another, and
// lists the store newest first with what is known of each snapshot: the revision and sha256
// of the one taken or of the status so far, onDemand kept.
func TestApply(t *testing.T) {
	t0 := at("2026-11-28T12:00:00Z")
	ts := func(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }
	old := operatorv1alpha1.EtcdSnapshotInfo{Name: "root-20261128-060000", Time: metav1.NewTime(t0.Add(-6 * time.Hour)), Revision: 7, SHA256: "old",
		SizeBytes: 10, Store: StoreVolume, OnDemand: true}
	listed := []agent.Snapshot{{Name: "root-20261128-120001", Time: t0.Add(time.Second), Size: 20},
		{Name: "root-20261128-060000", Time: t0.Add(-6 * time.Hour), Size: 10}}
	taken := &agent.Snapshot{Name: "root-20261128-120001", Time: t0.Add(time.Second), Size: 20, Revision: 9, SHA256: "new"}
	pending := &operatorv1alpha1.EtcdPendingSnapshot{Name: "root-20261128-120001"}
	for _, tc := range []struct {
		name string
		st   operatorv1alpha1.ManagedEtcdStatus
		res  Result
		want operatorv1alpha1.ManagedEtcdStatus
	}{{
		name: "a scheduled snapshot taken",
		st:   operatorv1alpha1.ManagedEtcdStatus{Snapshots: []operatorv1alpha1.EtcdSnapshotInfo{old}, PendingSnapshot: pending},
		res:  Result{Request: Request{Scheduled: t0}, Taken: taken, Listed: listed},
		want: operatorv1alpha1.ManagedEtcdStatus{LastScheduleTime: ts(t0), PendingSnapshot: pending, Snapshots: []operatorv1alpha1.EtcdSnapshotInfo{
			{Name: taken.Name, Time: metav1.NewTime(taken.Time), Revision: 9, SHA256: "new", SizeBytes: 20, Store: StoreVolume}, old}},
	}, {
		name: "an older schedule time does not move it back",
		st:   operatorv1alpha1.ManagedEtcdStatus{LastScheduleTime: ts(t0.Add(time.Hour))},
		res:  Result{Request: Request{Scheduled: t0}, Taken: taken},
		want: operatorv1alpha1.ManagedEtcdStatus{LastScheduleTime: ts(t0.Add(time.Hour))},
	}, {
		name: "a failed scheduled take moves nothing",
		st:   operatorv1alpha1.ManagedEtcdStatus{Snapshots: []operatorv1alpha1.EtcdSnapshotInfo{old}},
		res:  Result{Request: Request{Scheduled: t0}, Err: errors.New("no member")},
		want: operatorv1alpha1.ManagedEtcdStatus{Snapshots: []operatorv1alpha1.EtcdSnapshotInfo{old}},
	}, {
		name: "the pending snapshot taken is cleared and marked on demand",
		st:   operatorv1alpha1.ManagedEtcdStatus{PendingSnapshot: pending, Snapshots: []operatorv1alpha1.EtcdSnapshotInfo{old}},
		res:  Result{Request: Request{Name: pending.Name}, Taken: taken, Listed: listed},
		want: operatorv1alpha1.ManagedEtcdStatus{Snapshots: []operatorv1alpha1.EtcdSnapshotInfo{
			{Name: taken.Name, Time: metav1.NewTime(taken.Time), Revision: 9, SHA256: "new", SizeBytes: 20, Store: StoreVolume, OnDemand: true}, old}},
	}, {
		name: "a pending snapshot found taken before is cleared",
		st:   operatorv1alpha1.ManagedEtcdStatus{PendingSnapshot: pending},
		res:  Result{Request: Request{Name: pending.Name}, Existed: true},
		want: operatorv1alpha1.ManagedEtcdStatus{},
	}, {
		name: "another pending snapshot, asked for since, stays",
		st:   operatorv1alpha1.ManagedEtcdStatus{PendingSnapshot: &operatorv1alpha1.EtcdPendingSnapshot{Name: "root-20261128-130000"}},
		res:  Result{Request: Request{Name: pending.Name}, Taken: taken},
		want: operatorv1alpha1.ManagedEtcdStatus{PendingSnapshot: &operatorv1alpha1.EtcdPendingSnapshot{Name: "root-20261128-130000"}},
	}, {
		name: "a failed on-demand take keeps it pending",
		st:   operatorv1alpha1.ManagedEtcdStatus{PendingSnapshot: pending},
		res:  Result{Request: Request{Name: pending.Name}, Err: errors.New("no member")},
		want: operatorv1alpha1.ManagedEtcdStatus{PendingSnapshot: pending},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			st := *tc.st.DeepCopy()
			Apply(&st, tc.res, StoreVolume)
			assert.Equal(t, tc.want, st)
		})
	}
}
