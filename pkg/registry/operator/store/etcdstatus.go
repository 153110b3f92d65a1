package store

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// BackupSubresource is the create subresource of RootShards and Shards that asks for a
// snapshot of their managed etcd now.
const BackupSubresource = "backup"

// EtcdStatusWritten are the ServerWritten parts of a RootShard's or Shard's status.etcd
// (etcd points at it): what the members and the snapshot store report, which the
// controllers alone write, and the snapshot asked for on demand (pendingSnapshot), which
// the backup subresource writes too and the controllers clear once it is taken.
func EtcdStatusWritten[T any](etcd func(T) *operator.ManagedEtcdStatus) []ServerWritten[T] {
	return []ServerWritten[T]{{
		Path: field.NewPath("status", "etcd"),
		Value: func(o T) any {
			var observed operator.ManagedEtcdStatus
			if e := etcd(o); e != nil {
				observed = *e
				observed.PendingSnapshot = nil
			}
			return observed
		},
		Why: "the state of the managed etcd, as its members and its snapshot store report it",
	}, {
		Path: field.NewPath("status", "etcd", "pendingSnapshot"),
		Value: func(o T) any {
			if e := etcd(o); e != nil {
				return e.PendingSnapshot
			}
			return (*operator.EtcdPendingSnapshot)(nil)
		},
		Why:         "the snapshot asked for on demand",
		Subresource: BackupSubresource,
	}}
}
