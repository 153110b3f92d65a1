package backup

import (
	"time"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup"
)

// SnapshotName is the name of a snapshot of the managed etcd base asked for at now:
// <base>-<UTC yyyymmdd-hhmmss>, as the backup agent names the snapshots it takes
// (etcdbackup.NewName), with -1, -2, … appended when a snapshot of status.etcd.snapshots
// holds that name already (one taken by the schedule in the same second).
func SnapshotName(base string, now time.Time, taken []operator.EtcdSnapshotInfo) (string, error) {
	existing := make([]etcdbackup.Object, 0, len(taken))
	for _, s := range taken {
		existing = append(existing, etcdbackup.Object{Name: s.Name})
	}
	return etcdbackup.NewName(base, now, existing)
}
