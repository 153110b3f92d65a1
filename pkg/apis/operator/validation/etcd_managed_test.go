package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// validManagedEtcd is a managed etcd with every field set.
func validManagedEtcd() *operator.ManagedEtcd {
	size := resource.MustParse("8Gi")
	return &operator.ManagedEtcd{
		Replicas: ptr[int32](3),
		Storage:  &operator.EtcdStorage{VolumeSize: &size, StorageClassName: ptr("fast-ssd")},
		Image:    &operator.ImageSpec{Repository: "registry.example.com/etcd", Tag: "v3.7.0"},
		Resources: &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
		},
		Template: &operator.DeploymentTemplate{Spec: &operator.DeploymentSpecTemplate{Template: &operator.PodTemplateSpec{
			Spec: &operator.PodSpecTemplate{NodeSelector: map[string]string{"disk": "ssd"}},
		}}},
	}
}

// validS3 is an S3 store with every field set.
func validS3() *operator.S3SnapshotStore {
	return &operator.S3SnapshotStore{Endpoint: "https://s3.example.com:9000", Bucket: "kcp-snapshots", Prefix: "prod/",
		Region: "eu-central-1", CredentialsSecretRef: corev1.LocalObjectReference{Name: "s3-credentials"}}
}

func TestValidateManagedEtcd(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.EtcdConfig)
		want   []wantErr
	}{
		{name: "managed alone"},
		{name: "managed with a prefix", mutate: func(e *operator.EtcdConfig) { e.Prefix = "/kcp" }},
		{name: "managed with nothing set", mutate: func(e *operator.EtcdConfig) { e.Managed = &operator.ManagedEtcd{} }},
		{name: "one member", mutate: func(e *operator.EtcdConfig) { e.Managed.Replicas = ptr[int32](1) }},
		{name: "five members", mutate: func(e *operator.EtcdConfig) { e.Managed.Replicas = ptr[int32](5) }},
		{
			name:   "endpoints and managed",
			mutate: func(e *operator.EtcdConfig) { e.Endpoints = []string{"https://etcd:2379"} },
			want:   []wantErr{forbidden("spec.etcd.managed", "endpoints and managed are mutually exclusive")},
		},
		{
			name:   "neither endpoints nor managed",
			mutate: func(e *operator.EtcdConfig) { e.Managed = nil },
			want:   []wantErr{required("spec.etcd.endpoints")},
		},
		{
			name: "managed with tlsConfig",
			mutate: func(e *operator.EtcdConfig) {
				e.TLSConfig = &operator.EtcdTLSConfig{SecretRef: corev1.LocalObjectReference{Name: "etcd-client"}}
			},
			want: []wantErr{forbidden("spec.etcd.tlsConfig", "the managed etcd's client certificate is issued by the server")},
		},
		{
			name:   "an even member count",
			mutate: func(e *operator.EtcdConfig) { e.Managed.Replicas = ptr[int32](2) },
			want:   []wantErr{notSupported("spec.etcd.managed.replicas", `"1", "3", "5"`)},
		},
		{
			name:   "no members",
			mutate: func(e *operator.EtcdConfig) { e.Managed.Replicas = ptr[int32](0) },
			want:   []wantErr{notSupported("spec.etcd.managed.replicas")},
		},
		{
			name:   "seven members",
			mutate: func(e *operator.EtcdConfig) { e.Managed.Replicas = ptr[int32](7) },
			want:   []wantErr{notSupported("spec.etcd.managed.replicas")},
		},
		{
			name:   "zero storage",
			mutate: func(e *operator.EtcdConfig) { e.Managed.Storage.VolumeSize = ptr(resource.MustParse("0")) },
			want:   []wantErr{invalid("spec.etcd.managed.storage.size", "must be greater than zero")},
		},
		{
			name:   "negative storage",
			mutate: func(e *operator.EtcdConfig) { e.Managed.Storage.VolumeSize = ptr(resource.MustParse("-1Gi")) },
			want:   []wantErr{invalid("spec.etcd.managed.storage.size", "must be greater than zero")},
		},
		{name: "a quota", mutate: func(e *operator.EtcdConfig) { e.Managed.Quota = ptr(resource.MustParse("4Gi")) }},
		{name: "a quota as large as the volume", mutate: func(e *operator.EtcdConfig) { e.Managed.Quota = ptr(resource.MustParse("8Gi")) }},
		{
			name:   "a quota larger than the volume",
			mutate: func(e *operator.EtcdConfig) { e.Managed.Quota = ptr(resource.MustParse("9Gi")) },
			want:   []wantErr{invalid("spec.etcd.managed.quota", "must not be larger than storage.size (8Gi)")},
		},
		{
			name:   "a zero quota",
			mutate: func(e *operator.EtcdConfig) { e.Managed.Quota = ptr(resource.MustParse("0")) },
			want:   []wantErr{invalid("spec.etcd.managed.quota", "must be greater than zero")},
		},
		{
			name:   "a quota in millibytes",
			mutate: func(e *operator.EtcdConfig) { e.Managed.Quota = ptr(resource.MustParse("1500m")) },
			want:   []wantErr{invalid("spec.etcd.managed.quota", "whole number of bytes")},
		},
		{
			name: "defragmentation at its bounds",
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Defragmentation = &operator.EtcdDefragmentation{ThresholdPercent: ptr[int32](100), MinimumSize: ptr(resource.MustParse("0"))}
			},
		},
		{
			name: "a defragmentation threshold of 0 and a negative minimum",
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Defragmentation = &operator.EtcdDefragmentation{ThresholdPercent: ptr[int32](0), MinimumSize: ptr(resource.MustParse("-1Mi"))}
			},
			want: []wantErr{
				invalid("spec.etcd.managed.defragmentation.thresholdPercent", "between 1 and 100"),
				invalid("spec.etcd.managed.defragmentation.minimumSize", "must not be negative"),
			},
		},
		{
			name: "a defragmentation threshold above 100",
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Defragmentation = &operator.EtcdDefragmentation{ThresholdPercent: ptr[int32](101)}
			},
			want: []wantErr{invalid("spec.etcd.managed.defragmentation.thresholdPercent", "between 1 and 100")},
		},
		{
			name: "a backup to a volume and a restore from it",
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Backup = &operator.EtcdBackup{Schedule: "0 */6 * * *", TimeZone: ptr("Europe/Berlin"), Retention: ptr[int32](3),
					Store: operator.EtcdSnapshotStore{Volume: &operator.EtcdSnapshotVolume{VolumeSize: ptr(resource.MustParse("16Gi"))}}}
				e.Managed.Restore = &operator.EtcdRestore{Snapshot: "root-20261128-101500"}
			},
		},
		{
			name: "a backup to S3 and a restore from it",
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Backup = &operator.EtcdBackup{Store: operator.EtcdSnapshotStore{S3: validS3()}}
				e.Managed.Restore = &operator.EtcdRestore{Snapshot: "root-20261128-101500"}
			},
		},
		{
			name: "a restore without a backup store",
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Restore = &operator.EtcdRestore{Snapshot: "root-20261128-101500"}
			},
			want: []wantErr{required("spec.etcd.managed.backup")},
		},
		{
			name: "a restore from another setup's store, without a backup of its own",
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Restore = &operator.EtcdRestore{Snapshot: "old-20261128-101500", From: &operator.EtcdRestoreSource{Kind: "RootShard", Name: "old"}}
			},
		},
		{
			name: "a restore from a Shard's store, with a backup of its own",
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Backup = &operator.EtcdBackup{Store: operator.EtcdSnapshotStore{S3: validS3()}}
				e.Managed.Restore = &operator.EtcdRestore{Snapshot: "old-shard-20261128-101500", From: &operator.EtcdRestoreSource{Kind: "Shard", Name: "old"}}
			},
		},
		{
			name: "a restore from a setup of a bad name",
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Restore = &operator.EtcdRestore{Snapshot: "old-20261128-101500", From: &operator.EtcdRestoreSource{Kind: "RootShard", Name: "Old_One"}}
			},
			want: []wantErr{invalid("spec.etcd.managed.restore.from.name")},
		},
		{
			name: "a restore from a bucket, named as the backup store with the old setup's prefix",
			mutate: func(e *operator.EtcdConfig) {
				s3 := validS3()
				s3.Prefix = "team-a/old/"
				e.Managed.Backup = &operator.EtcdBackup{Store: operator.EtcdSnapshotStore{S3: s3}}
				e.Managed.Restore = &operator.EtcdRestore{Snapshot: "old-20261128-101500"}
			},
		},
		{
			name: "a bad schedule, zone, retention and both stores",
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Backup = &operator.EtcdBackup{Schedule: "every hour", TimeZone: ptr("Mars/Olympus"), Retention: ptr[int32](0),
					Store: operator.EtcdSnapshotStore{Volume: &operator.EtcdSnapshotVolume{}, S3: validS3()}}
			},
			want: []wantErr{
				invalid("spec.etcd.managed.backup.schedule", "five fields"),
				invalid("spec.etcd.managed.backup.timeZone", "IANA"),
				invalid("spec.etcd.managed.backup.retention", "between 1 and 1000"),
				forbidden("spec.etcd.managed.backup.store.s3", "mutually exclusive"),
			},
		},
		{
			name: "a schedule with a time zone in it",
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Backup = &operator.EtcdBackup{Schedule: "CRON_TZ=UTC 0 * * * *"}
			},
			want: []wantErr{invalid("spec.etcd.managed.backup.schedule", "use timeZone")},
		},
		{
			name: "an S3 store over http, with a bad bucket, prefix, Secret and CA bundle",
			mutate: func(e *operator.EtcdConfig) {
				s3 := &operator.S3SnapshotStore{Endpoint: "http://s3.example.com", Bucket: "Snapshots_", Prefix: "/abs/../x",
					CABundle: []byte("not a certificate")}
				e.Managed.Backup = &operator.EtcdBackup{Store: operator.EtcdSnapshotStore{S3: s3}}
			},
			want: []wantErr{
				invalid("spec.etcd.managed.backup.store.s3.endpoint", "https"),
				invalid("spec.etcd.managed.backup.store.s3.bucket", "bucket name"),
				invalid("spec.etcd.managed.backup.store.s3.prefix", "slash"),
				required("spec.etcd.managed.backup.store.s3.credentialsSecretRef.name"),
				invalid("spec.etcd.managed.backup.store.s3.caBundle", "PEM"),
			},
		},
		{
			name: "an S3 endpoint with a path",
			mutate: func(e *operator.EtcdConfig) {
				s3 := validS3()
				s3.Endpoint = "https://s3.example.com/bucket"
				e.Managed.Backup = &operator.EtcdBackup{Store: operator.EtcdSnapshotStore{S3: s3}}
			},
			want: []wantErr{invalid("spec.etcd.managed.backup.store.s3.endpoint", "without user, path or query")},
		},
		{
			name: "a restore of a bad kind, without a snapshot",
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Restore = &operator.EtcdRestore{From: &operator.EtcdRestoreSource{Kind: "FrontProxy", Name: "x"}}
			},
			want: []wantErr{required("spec.etcd.managed.restore.snapshot"), notSupported("spec.etcd.managed.restore.from.kind", `"RootShard", "Shard"`)},
		},
		{
			name: "a restore from a FrontProxy",
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Backup = &operator.EtcdBackup{Store: operator.EtcdSnapshotStore{S3: validS3()}}
				e.Managed.Restore = &operator.EtcdRestore{Snapshot: "s", From: &operator.EtcdRestoreSource{Kind: "FrontProxy", Name: "x"}}
			},
			want: []wantErr{notSupported("spec.etcd.managed.restore.from.kind", `"RootShard", "Shard"`)},
		},
		{
			name:   "bad storage class",
			mutate: func(e *operator.EtcdConfig) { e.Managed.Storage.StorageClassName = ptr("Fast_SSD") },
			want:   []wantErr{invalid("spec.etcd.managed.storage.storageClassName")},
		},
		{
			name:   "bad image tag",
			mutate: func(e *operator.EtcdConfig) { e.Managed.Image.Tag = "v3.7.0 latest" },
			want:   []wantErr{invalid("spec.etcd.managed.image.tag")},
		},
		{
			name: "negative resources",
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("-1")
			},
			want: []wantErr{invalid("spec.etcd.managed.resources.requests[cpu]")},
		},
		{
			name: "template with a bad toleration",
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Template.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Sometimes"}}
			},
			want: []wantErr{notSupported("spec.etcd.managed.template.spec.template.spec.tolerations[0].operator")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			etcd := operator.EtcdConfig{Managed: validManagedEtcd()}
			if tc.mutate != nil {
				tc.mutate(&etcd)
			}
			assertErrors(t, tc.want, validateEtcdConfig(&etcd, field.NewPath("spec", "etcd")))
		})
	}
}

// TestValidateManagedEtcdWiring proves that a RootShard's and a Shard's spec.etcd reach the
// managed etcd's validation, and that a CacheServer refuses a managed etcd.
func TestValidateManagedEtcdWiring(t *testing.T) {
	rs := validRootShard()
	rs.Spec.Etcd = operator.EtcdConfig{Managed: validManagedEtcd()}
	assertErrors(t, nil, ValidateRootShard(rs))
	rs.Spec.Etcd.Managed.Replicas = ptr[int32](4)
	assertErrors(t, []wantErr{notSupported("spec.etcd.managed.replicas")}, ValidateRootShard(rs))

	s := validShard()
	s.Spec.Etcd = operator.EtcdConfig{Managed: validManagedEtcd(), Endpoints: []string{"https://etcd:2379"}}
	assertErrors(t, []wantErr{forbidden("spec.etcd.managed")}, ValidateShard(s))

	cs := validCacheServer()
	cs.Spec.Etcd = &operator.EtcdConfig{Managed: validManagedEtcd()}
	assertErrors(t, []wantErr{forbidden("spec.etcd.managed", "without spec.etcd it runs an embedded one")}, ValidateCacheServer(cs))
}

func TestValidateEtcdConfigUpdate(t *testing.T) {
	external := func() operator.EtcdConfig { return validEtcd() }
	managed := func() operator.EtcdConfig { return operator.EtcdConfig{Managed: validManagedEtcd()} }
	tests := []struct {
		name     string
		old, new operator.EtcdConfig
		mutate   func(*operator.EtcdConfig)
		want     []wantErr
	}{
		{name: "external unchanged", old: external(), new: external()},
		{
			name: "external endpoints changed", old: external(), new: external(),
			mutate: func(e *operator.EtcdConfig) { e.Endpoints = []string{"https://other:2379"} },
		},
		{name: "managed unchanged", old: managed(), new: managed()},
		{
			name: "managed image, resources and template changed", old: managed(), new: managed(),
			mutate: func(e *operator.EtcdConfig) {
				e.Managed.Image.Tag = "v3.7.1"
				e.Managed.Resources = nil
				e.Managed.Template = nil
			},
		},
		{
			name: "the same size written differently", old: managed(), new: managed(),
			mutate: func(e *operator.EtcdConfig) { e.Managed.Storage.VolumeSize = ptr(resource.MustParse("8192Mi")) },
		},
		{
			name: "managed to endpoints", old: managed(), new: external(),
			want: []wantErr{forbidden("spec.etcd.managed", "the data would not follow")},
		},
		{
			name: "endpoints to managed", old: external(), new: managed(),
			want: []wantErr{forbidden("spec.etcd.managed", "the data would not follow")},
		},
		{
			name: "replicas changed", old: managed(), new: managed(),
			mutate: func(e *operator.EtcdConfig) { e.Managed.Replicas = ptr[int32](5) },
			want: []wantErr{forbidden("spec.etcd.managed.replicas",
				"is immutable for now: growing or shrinking a running etcd cluster needs member changes one at a time")},
		},
		{
			name: "storage size changed", old: managed(), new: managed(),
			mutate: func(e *operator.EtcdConfig) { e.Managed.Storage.VolumeSize = ptr(resource.MustParse("16Gi")) },
			want:   []wantErr{forbidden("spec.etcd.managed.storage", "immutable")},
		},
		{
			name: "storage class changed", old: managed(), new: managed(),
			mutate: func(e *operator.EtcdConfig) { e.Managed.Storage.StorageClassName = nil },
			want:   []wantErr{forbidden("spec.etcd.managed.storage", "immutable")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mutate != nil {
				tc.mutate(&tc.new)
			}
			assertErrors(t, tc.want, validateEtcdConfigUpdate(&tc.new, &tc.old, field.NewPath("spec", "etcd")))
		})
	}
}

// TestValidateEtcdConfigUpdateWiring proves that RootShard and Shard updates check spec.etcd.
func TestValidateEtcdConfigUpdateWiring(t *testing.T) {
	oldRS, newRS := validRootShard(), validRootShard()
	oldRS.ObjectMeta, newRS.ObjectMeta = updatedObjectMeta("root"), updatedObjectMeta("root")
	oldRS.Spec.Etcd = operator.EtcdConfig{Managed: validManagedEtcd()}
	newRS.Spec.Etcd = operator.EtcdConfig{Managed: validManagedEtcd()}
	newRS.Spec.Etcd.Managed.Replicas = ptr[int32](1)
	assertErrors(t, []wantErr{forbidden("spec.etcd.managed.replicas")}, ValidateRootShardUpdate(newRS, oldRS))

	oldS, newS := validShard(), validShard()
	oldS.ObjectMeta, newS.ObjectMeta = updatedObjectMeta("shard-a"), updatedObjectMeta("shard-a")
	newS.Spec.Etcd = operator.EtcdConfig{Managed: validManagedEtcd()}
	assertErrors(t, []wantErr{forbidden("spec.etcd.managed", "the data would not follow")}, ValidateShardUpdate(newS, oldS))
}
