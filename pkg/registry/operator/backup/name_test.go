package backup

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// TestSnapshotName: <base>-<UTC yyyymmdd-hhmmss>, whatever the clock's zone, with a suffix
// only when status.etcd.snapshots holds the name; the bases are the builders'.
func TestSnapshotName(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	at := time.Date(2026, 11, 29, 2, 15, 0, 0, berlin)
	for _, tc := range []struct {
		name  string
		base  string
		taken []string
		want  string
	}{
		{"a RootShard's", rootshard.EtcdBase("root"), nil, "root-20261129-011500"},
		{"a Shard's", shard.EtcdBase("alpha"), nil, "alpha-shard-20261129-011500"},
		{"other snapshots listed", "root", []string{"root-20261129-001500", "other-20261129-011500"}, "root-20261129-011500"},
		{"the schedule took one that second", "root", []string{"root-20261129-011500"}, "root-20261129-011500-1"},
		{"and another", "root", []string{"root-20261129-011500", "root-20261129-011500-1"}, "root-20261129-011500-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var taken []operator.EtcdSnapshotInfo
			for _, n := range tc.taken {
				taken = append(taken, operator.EtcdSnapshotInfo{Name: n})
			}
			got, err := SnapshotName(tc.base, at, taken)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := SnapshotName("../etc", at, nil)
	assert.Error(t, err, "a name no store takes")
}
