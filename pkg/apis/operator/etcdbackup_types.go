package operator

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
	Schedule string
	// TimeZone is the IANA time zone of the schedule. Defaults to UTC.
	TimeZone *string
	// Retention is how many snapshots of this etcd the store keeps, the newest, whether
	// scheduled or on demand: 1 to 1000. Defaults to 7.
	Retention *int32
	// Store is where the snapshots are written. A volume of the backup agent when empty.
	Store EtcdSnapshotStore
}

// EtcdSnapshotStore is where snapshots are kept: exactly one of volume and s3.
type EtcdSnapshotStore struct {
	// Volume keeps the snapshots on a PersistentVolumeClaim of the backup agent,
	// <base>-etcd-snapshots, readable only by the etcd pods' identity. It stays when its
	// owner is deleted, as the members' claims do.
	Volume *EtcdSnapshotVolume
	// S3 keeps the snapshots in S3-compatible object storage.
	S3 *S3SnapshotStore
}

// EtcdSnapshotVolume is the volume the snapshots are kept on.
type EtcdSnapshotVolume struct {
	// VolumeSize is the size of the claim. Defaults to the members' storage size. Immutable.
	VolumeSize *resource.Quantity
	// StorageClassName is the claim's StorageClass; the cluster's default when unset.
	// Immutable.
	StorageClassName *string
}

// S3SnapshotStore is a bucket (and a prefix in it) of S3-compatible object storage.
type S3SnapshotStore struct {
	// Endpoint is the storage's URL: https, host and port, no path.
	Endpoint string
	// Bucket is the bucket's name. It must exist.
	Bucket string
	// Prefix is put before every snapshot's name. Defaults to "<namespace>/<base>/".
	Prefix string
	// Region is the bucket's region, for the request signatures. Defaults to us-east-1.
	Region string
	// CredentialsSecretRef names a Secret of the namespace with the keys accessKeyID and
	// secretAccessKey. Naming it needs get on it.
	CredentialsSecretRef corev1.LocalObjectReference
	// CABundle is the PEM of the CAs the endpoint's certificate chains to, when the system's
	// do not.
	CABundle []byte
}

// EtcdRestore starts a managed etcd from a snapshot: every member restores it into its empty
// data directory before etcd starts, and kcp starts after. Only a cluster none of whose
// members' claims exist yet is restored.
type EtcdRestore struct {
	// Snapshot is the snapshot's name, as a setup's status.etcd.snapshots lists it.
	Snapshot string
	// From is the setup of the namespace whose store holds the snapshot; this one's when
	// unset. It needs get on that setup's backup subresource (on this one's own without it).
	// A bucket is restored from as this one's own backup store (docs/etcd.md).
	From *EtcdRestoreSource
}

// EtcdRestoreSource names a RootShard or Shard of the namespace.
type EtcdRestoreSource struct {
	// Kind is RootShard or Shard.
	Kind string
	// Name is the setup's name.
	Name string
}

// EtcdPendingSnapshot is a snapshot asked for on demand and not taken yet.
type EtcdPendingSnapshot struct {
	// Name is the name the snapshot will have in the store, which the request answered.
	Name string
	// RequestTime is when it was asked for.
	RequestTime metav1.Time
}

// EtcdSnapshotInfo is one snapshot of a store.
type EtcdSnapshotInfo struct {
	// Name is the snapshot's name in its store: <base>-<UTC time, yyyymmdd-hhmmss>.
	Name string
	// Time is when the snapshot was taken.
	Time metav1.Time
	// Revision is etcd's revision the snapshot holds.
	Revision int64
	// SizeBytes is the snapshot's size in bytes.
	SizeBytes int64
	// SHA256 is the hex SHA-256 of the whole snapshot as stored.
	SHA256 string
	// Store is volume or s3.
	Store string
	// OnDemand says the snapshot was asked for through the backup subresource.
	OnDemand bool
}
