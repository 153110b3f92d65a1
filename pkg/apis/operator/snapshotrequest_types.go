package operator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// EtcdSnapshotRequest is the body of the backup subresource of RootShards and Shards: it asks
// for a snapshot of the object's managed etcd now. It is not stored itself: the snapshot is
// the object's status.etcd.pendingSnapshot until the server has taken it.
type EtcdSnapshotRequest struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Status is the snapshot asked for, as the server answers the request.
	Status EtcdSnapshotRequestStatus
}

// EtcdSnapshotRequestStatus names the snapshot a request asked for.
type EtcdSnapshotRequestStatus struct {
	// Snapshot is the name the snapshot will have in the store.
	Snapshot string
	// RequestTime is when it was asked for.
	RequestTime *metav1.Time
}
