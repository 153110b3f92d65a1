package etcdsnapshot

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup/agent"
)

// The stores a snapshot is in, as status.etcd.snapshots[].store says.
const (
	StoreVolume = "volume"
	StoreS3     = "s3"
)

// Snapshots is what status shows of a store: listed (the agent's list, newest first), each
// with its revision and sha256 from taken (the snapshot just taken) or from current (the
// status so far) when either has it, onDemand kept for the names current marks and set for
// taken when onDemand; in store.
func Snapshots(listed []agent.Snapshot, taken *agent.Snapshot, onDemand bool, current []operatorv1alpha1.EtcdSnapshotInfo, store string) []operatorv1alpha1.EtcdSnapshotInfo {
	known := make(map[string]operatorv1alpha1.EtcdSnapshotInfo, len(current))
	for _, c := range current {
		known[c.Name] = c
	}
	out := make([]operatorv1alpha1.EtcdSnapshotInfo, 0, len(listed))
	for _, l := range listed {
		info := operatorv1alpha1.EtcdSnapshotInfo{Name: l.Name, Time: metav1.NewTime(l.Time.UTC()), SizeBytes: l.Size, Store: store}
		if c, ok := known[l.Name]; ok {
			info.Revision, info.SHA256, info.OnDemand = c.Revision, c.SHA256, c.OnDemand
		}
		if taken != nil && taken.Name == l.Name {
			info.Revision, info.SHA256, info.OnDemand = taken.Revision, taken.SHA256, onDemand
		}
		out = append(out, info)
	}
	return out
}

// Apply writes into st what res, the last take's result, changes: the schedule time it took
// (lastScheduleTime only moves forward), the pending on-demand snapshot it took (cleared,
// when still the one pending), and the store's list. It is applied on every reconcile until
// a newer result, so that a status write lost after a take loses nothing.
func Apply(st *operatorv1alpha1.ManagedEtcdStatus, res Result, store string) {
	if !res.Scheduled.IsZero() && res.Taken != nil &&
		(st.LastScheduleTime == nil || st.LastScheduleTime.Time.Before(res.Scheduled)) {
		t := metav1.NewTime(res.Scheduled.UTC())
		st.LastScheduleTime = &t
	}
	if res.Name != "" && (res.Taken != nil || res.Existed) && st.PendingSnapshot != nil && st.PendingSnapshot.Name == res.Name {
		st.PendingSnapshot = nil
	}
	if res.Listed != nil {
		st.Snapshots = Snapshots(res.Listed, res.Taken, res.Name != "", st.Snapshots, store)
	}
}
