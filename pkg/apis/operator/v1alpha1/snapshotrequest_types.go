package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// EtcdSnapshotRequest is the body of the backup subresource of RootShards and Shards: it asks
// for a snapshot of the object's managed etcd now. Like an Eviction it has no spec: the
// request is the object it is posted to. It is not stored itself: the snapshot asked for is
// the object's status.etcd.pendingSnapshot until the server has taken it, and then one of
// status.etcd.snapshots.
type EtcdSnapshotRequest struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Status is the snapshot asked for, as the server answers the request; what a client
	// sends there is ignored.
	// +optional
	Status EtcdSnapshotRequestStatus `json:"status,omitempty" protobuf:"bytes,2,opt,name=status"`
}

// EtcdSnapshotRequestStatus names the snapshot a request asked for.
type EtcdSnapshotRequestStatus struct {
	// Snapshot is the name the snapshot will have in the store and in
	// status.etcd.snapshots: <base>-<UTC time, yyyymmdd-hhmmss>.
	// +optional
	Snapshot string `json:"snapshot,omitempty" protobuf:"bytes,1,opt,name=snapshot"`
	// RequestTime is when it was asked for, as status.etcd.pendingSnapshot records it.
	// +optional
	RequestTime *metav1.Time `json:"requestTime,omitempty" protobuf:"bytes,2,opt,name=requestTime"`
}
