package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1 "k8s.io/api/core/v1"
)

// EtcdBackup takes snapshots of a managed etcd into a store: on a schedule, and on demand
// through the backup subresource (docs/etcd.md, "Backups and restore").
type EtcdBackup struct {
	// Schedule is when snapshots are taken, in cron syntax (five fields, as a CronJob's).
	// Without it, snapshots are taken on demand only.
	// +optional
	Schedule string `json:"schedule,omitempty" protobuf:"bytes,1,opt,name=schedule"`
	// TimeZone is the IANA time zone of the schedule. Defaults to UTC.
	// +optional
	TimeZone *string `json:"timeZone,omitempty" protobuf:"bytes,2,opt,name=timeZone"`
	// Retention is how many snapshots of this etcd the store keeps, the newest, whether
	// scheduled or on demand: 1 to 1000. Defaults to 7.
	// +optional
	Retention *int32 `json:"retention,omitempty" protobuf:"varint,3,opt,name=retention"`
	// Store is where the snapshots are written. A volume of the backup agent when empty.
	// +optional
	Store EtcdSnapshotStore `json:"store,omitempty" protobuf:"bytes,4,opt,name=store"`
}

// EtcdSnapshotStore is where snapshots are kept: exactly one of volume and s3.
type EtcdSnapshotStore struct {
	// Volume keeps the snapshots on a PersistentVolumeClaim of the backup agent,
	// <base>-etcd-snapshots, readable only by the etcd pods' identity. It stays when its
	// owner is deleted, as the members' claims do.
	// +optional
	Volume *EtcdSnapshotVolume `json:"volume,omitempty" protobuf:"bytes,1,opt,name=volume"`
	// S3 keeps the snapshots in S3-compatible object storage.
	// +optional
	S3 *S3SnapshotStore `json:"s3,omitempty" protobuf:"bytes,2,opt,name=s3"`
}

// EtcdSnapshotVolume is the volume the snapshots are kept on.
type EtcdSnapshotVolume struct {
	// VolumeSize is the size of the claim. Defaults to the members' storage size. Immutable.
	// +optional
	VolumeSize *resource.Quantity `json:"size,omitempty" protobuf:"bytes,1,opt,name=size"`
	// StorageClassName is the claim's StorageClass; the cluster's default when unset.
	// Immutable.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty" protobuf:"bytes,2,opt,name=storageClassName"`
}

// S3SnapshotStore is a bucket (and a prefix in it) of S3-compatible object storage.
type S3SnapshotStore struct {
	// Endpoint is the storage's URL: https, host and port, no path.
	Endpoint string `json:"endpoint" protobuf:"bytes,1,opt,name=endpoint"`
	// Bucket is the bucket's name. It must exist.
	Bucket string `json:"bucket" protobuf:"bytes,2,opt,name=bucket"`
	// Prefix is put before every snapshot's name. Defaults to "<namespace>/<base>/".
	// +optional
	Prefix string `json:"prefix,omitempty" protobuf:"bytes,3,opt,name=prefix"`
	// Region is the bucket's region, for the request signatures. Defaults to us-east-1.
	// +optional
	Region string `json:"region,omitempty" protobuf:"bytes,4,opt,name=region"`
	// CredentialsSecretRef names a Secret of the namespace with the keys accessKeyID and
	// secretAccessKey. Naming it needs get on it.
	CredentialsSecretRef corev1.LocalObjectReference `json:"credentialsSecretRef" protobuf:"bytes,5,opt,name=credentialsSecretRef"`
	// CABundle is the PEM of the CAs the endpoint's certificate chains to, when the system's
	// do not.
	// +optional
	CABundle []byte `json:"caBundle,omitempty" protobuf:"bytes,6,opt,name=caBundle"`
}

// EtcdRestore starts a managed etcd from a snapshot: every member restores it into its empty
// data directory before etcd starts, and kcp starts after. Only a cluster none of whose
// members' claims exist yet is restored.
type EtcdRestore struct {
	// Snapshot is the snapshot's name, as a setup's status.etcd.snapshots lists it.
	Snapshot string `json:"snapshot" protobuf:"bytes,1,opt,name=snapshot"`
	// From is the setup of the namespace whose store holds the snapshot; this one's when
	// unset. It needs get on that setup's backup subresource (on this one's own without it).
	// A bucket is restored from as this one's own backup store (docs/etcd.md).
	// +optional
	From *EtcdRestoreSource `json:"from,omitempty" protobuf:"bytes,2,opt,name=from"`
}

// EtcdRestoreSource names a RootShard or Shard of the namespace.
type EtcdRestoreSource struct {
	// Kind is RootShard or Shard.
	Kind string `json:"kind" protobuf:"bytes,1,opt,name=kind"`
	// Name is the setup's name.
	Name string `json:"name" protobuf:"bytes,2,opt,name=name"`
}

// EtcdPendingSnapshot is a snapshot asked for on demand (the backup subresource) and not
// taken yet.
type EtcdPendingSnapshot struct {
	// Name is the name the snapshot will have in the store, which the request answered.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// RequestTime is when it was asked for.
	RequestTime metav1.Time `json:"requestTime" protobuf:"bytes,2,opt,name=requestTime"`
}

// EtcdSnapshotInfo is one snapshot of a store.
type EtcdSnapshotInfo struct {
	// Name is the snapshot's name in its store: <base>-<UTC time, yyyymmdd-hhmmss>.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Time is when the snapshot was taken.
	Time metav1.Time `json:"time" protobuf:"bytes,2,opt,name=time"`
	// Revision is etcd's revision the snapshot holds.
	Revision int64 `json:"revision" protobuf:"varint,3,opt,name=revision"`
	// SizeBytes is the snapshot's size in bytes (Go name: protobuf marshallers own Size).
	SizeBytes int64 `json:"size" protobuf:"varint,4,opt,name=size"`
	// SHA256 is the hex SHA-256 of the whole snapshot as stored.
	SHA256 string `json:"sha256" protobuf:"bytes,5,opt,name=sha256"`
	// Store is volume or s3.
	Store string `json:"store" protobuf:"bytes,6,opt,name=store"`
	// OnDemand says the snapshot was asked for through the backup subresource.
	// +optional
	OnDemand bool `json:"onDemand,omitempty" protobuf:"varint,7,opt,name=onDemand"`
}
