package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// TestEtcdStatusIsTheServers: status.etcd is the controllers' to write, but for the snapshot
// asked for on demand (pendingSnapshot), which the backup subresource's own write sets too.
// A writer of the status, or another subresource, gets a 403 at the part it changes; the
// refusal of pendingSnapshot names the subresource to ask.
func TestEtcdStatusIsTheServers(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC))
	pending := &operator.EtcdPendingSnapshot{Name: "root-20261129-010000", RequestTime: at}
	shard := func(e *operator.ManagedEtcdStatus) *operator.Shard {
		return &operator.Shard{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "team-a"}, Status: operator.ShardStatus{Etcd: e}}
	}
	member := []operator.EtcdMemberStatus{{Name: "s-shard-etcd-0", DatabaseSize: 100}}
	snapshot := []operator.EtcdSnapshotInfo{{Name: "s-shard-20261129-005900", Time: at, Store: "volume"}}

	controllers := &user.DefaultInfo{Name: user.APIServerUser, UID: "loopback-uid"}
	sam := &user.DefaultInfo{Name: "sam"}
	check := statusCheck{resource: "shards", controller: &ControllerIdentity{},
		serverWritten: serverWrittenChecks(EtcdStatusWritten(func(o *operator.Shard) *operator.ManagedEtcdStatus { return o.Status.Etcd }))}
	check.controller.Set(controllers)

	for _, tc := range []struct {
		name        string
		requester   user.Info
		subresource string
		old, new    *operator.Shard
		refusedAt   string
	}{
		{"the backup subresource asks for a snapshot of an etcd with no status yet", sam, "backup", shard(nil), shard(&operator.ManagedEtcdStatus{PendingSnapshot: pending}), ""},
		{"the backup subresource asks beside the members' status", sam, "backup",
			shard(&operator.ManagedEtcdStatus{Members: member}), shard(&operator.ManagedEtcdStatus{Members: member, PendingSnapshot: pending}), ""},
		{"the controllers take it and list it", controllers, "",
			shard(&operator.ManagedEtcdStatus{PendingSnapshot: pending}), shard(&operator.ManagedEtcdStatus{Snapshots: snapshot}), ""},
		{"sam asks through the status", sam, "", shard(nil), shard(&operator.ManagedEtcdStatus{PendingSnapshot: pending}), "status.etcd.pendingSnapshot"},
		{"sam drops a pending snapshot", sam, "",
			shard(&operator.ManagedEtcdStatus{PendingSnapshot: pending}), shard(&operator.ManagedEtcdStatus{}), "status.etcd.pendingSnapshot"},
		{"another subresource's write", sam, "rotation", shard(nil), shard(&operator.ManagedEtcdStatus{PendingSnapshot: pending}), "status.etcd.pendingSnapshot"},
		{"the backup subresource lists a snapshot", sam, "backup",
			shard(&operator.ManagedEtcdStatus{PendingSnapshot: pending}), shard(&operator.ManagedEtcdStatus{Snapshots: snapshot}), "status.etcd:"},
		{"sam forges a member", sam, "", shard(nil), shard(&operator.ManagedEtcdStatus{Members: member}), "status.etcd:"},
		{"sam leaves status.etcd as it is", sam, "", shard(&operator.ManagedEtcdStatus{Members: member}), shard(&operator.ManagedEtcdStatus{Members: member}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := genericapirequest.WithUser(context.Background(), tc.requester)
			if tc.subresource != "" {
				ctx = WithSubresourceWrite(ctx, tc.subresource)
			}
			err := check.check(ctx, tc.new, tc.old)
			if tc.refusedAt == "" {
				require.NoError(t, err)
				return
			}
			require.True(t, apierrors.IsForbidden(err), "a 403, got %v", err)
			assert.Contains(t, err.Error(), tc.refusedAt)
			assert.Contains(t, err.Error(), `user "sam" may not change it`)
			if tc.refusedAt == "status.etcd.pendingSnapshot" {
				assert.Contains(t, err.Error(), "ask the backup subresource (create on shards/backup)")
			}
		})
	}
}
