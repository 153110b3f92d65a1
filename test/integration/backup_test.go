package integration

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// withManagedEtcd gives a setup's spec a managed etcd, with a backup when backup is set.
func withManagedEtcd(spec *operatorv1alpha1.CommonShardSpec, backup bool) {
	spec.Etcd = operatorv1alpha1.EtcdConfig{Managed: &operatorv1alpha1.ManagedEtcd{}}
	if backup {
		spec.Etcd.Managed.Backup = &operatorv1alpha1.EtcdBackup{}
	}
}

// TestBackupSubresource: POST rootshards/<name>/backup and shards/<name>/backup answer 201
// with the snapshot's name, <base>-<UTC time>, recorded as status.etcd.pendingSnapshot; a
// second request while it is pending is a 409 naming it; a dry run stores nothing; an
// object without a store for snapshots, or with an external etcd, is a 422 at the field,
// and an absent one a 404. (Who may ask is the end-to-end tier's: RBAC is off here.)
func TestBackupSubresource(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	ctx := t.Context()
	ops := s.client.OperatorV1alpha1()
	request := &operatorv1alpha1.EtcdSnapshotRequest{}

	rs := newRootShard("backed")
	withManagedEtcd(&rs.Spec.CommonShardSpec, true)
	_, err := ops.RootShards(namespace).Create(ctx, rs, metav1.CreateOptions{})
	require.NoError(t, err)

	t.Run("a dry run stores nothing", func(t *testing.T) {
		out, err := ops.RootShards(namespace).Backup(ctx, "backed", request, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		require.NoError(t, err)
		assert.Regexp(t, `^backed-[0-9]{8}-[0-9]{6}$`, out.Status.Snapshot)
		got, err := ops.RootShards(namespace).Get(ctx, "backed", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Nil(t, got.Status.Etcd, "nothing stored")
	})

	var asked *operatorv1alpha1.EtcdSnapshotRequest
	t.Run("a RootShard's snapshot is asked for", func(t *testing.T) {
		asked, err = ops.RootShards(namespace).Backup(ctx, "backed", request, metav1.CreateOptions{})
		require.NoError(t, err)
		assert.Equal(t, "backed", asked.Name)
		assert.Regexp(t, `^backed-[0-9]{8}-[0-9]{6}$`, asked.Status.Snapshot)
		require.NotNil(t, asked.Status.RequestTime)
		got, err := ops.RootShards(namespace).Get(ctx, "backed", metav1.GetOptions{})
		require.NoError(t, err)
		require.NotNil(t, got.Status.Etcd)
		require.NotNil(t, got.Status.Etcd.PendingSnapshot)
		assert.Equal(t, asked.Status.Snapshot, got.Status.Etcd.PendingSnapshot.Name)
		assert.True(t, asked.Status.RequestTime.Equal(&got.Status.Etcd.PendingSnapshot.RequestTime))
	})

	t.Run("asked again while pending: 409 naming it", func(t *testing.T) {
		require.NotNil(t, asked)
		_, err := ops.RootShards(namespace).Backup(ctx, "backed", request, metav1.CreateOptions{})
		require.True(t, apierrors.IsConflict(err), "got %v", err)
		assert.Contains(t, err.Error(), asked.Status.Snapshot)
	})

	t.Run("a Shard's snapshot is named after its etcd", func(t *testing.T) {
		sh := newShard("alpha", "backed")
		withManagedEtcd(&sh.Spec.CommonShardSpec, true)
		_, err := ops.Shards(namespace).Create(ctx, sh, metav1.CreateOptions{})
		require.NoError(t, err)
		out, err := ops.Shards(namespace).Backup(ctx, "alpha", request, metav1.CreateOptions{})
		require.NoError(t, err)
		assert.Regexp(t, regexp.MustCompile(`^alpha-shard-[0-9]{8}-[0-9]{6}$`), out.Status.Snapshot)
		got, err := ops.Shards(namespace).Get(ctx, "alpha", metav1.GetOptions{})
		require.NoError(t, err)
		require.NotNil(t, got.Status.Etcd)
		require.NotNil(t, got.Status.Etcd.PendingSnapshot)
		assert.Equal(t, out.Status.Snapshot, got.Status.Etcd.PendingSnapshot.Name)
	})

	t.Run("refused", func(t *testing.T) {
		unbacked := newRootShard("unbacked")
		withManagedEtcd(&unbacked.Spec.CommonShardSpec, false)
		_, err := ops.RootShards(namespace).Create(ctx, unbacked, metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = ops.RootShards(namespace).Backup(ctx, "unbacked", request, metav1.CreateOptions{})
		assertInvalid(t, err, "spec.etcd.managed.backup")

		_, err = ops.RootShards(namespace).Create(ctx, newRootShard("external"), metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = ops.RootShards(namespace).Backup(ctx, "external", request, metav1.CreateOptions{})
		assertInvalid(t, err, "spec.etcd.endpoints")
		_, err = ops.Shards(namespace).Create(ctx, newShard("outside", "backed"), metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = ops.Shards(namespace).Backup(ctx, "outside", request, metav1.CreateOptions{})
		assertInvalid(t, err, "spec.etcd.endpoints")

		_, err = ops.RootShards(namespace).Backup(ctx, "absent", request, metav1.CreateOptions{})
		assert.True(t, apierrors.IsNotFound(err), "got %v", err)

		_, err = ops.RootShards(namespace).Backup(ctx, "backed", &operatorv1alpha1.EtcdSnapshotRequest{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{})
		assert.True(t, apierrors.IsBadRequest(err), "got %v", err)

		for _, name := range []string{"unbacked", "external"} {
			got, err := ops.RootShards(namespace).Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			assert.Nil(t, got.Status.Etcd, "nothing stored for %s", name)
		}
	})
}

// TestRestoreFromAnotherSetupIsServed: a new RootShard or Shard whose managed etcd restores
// from another setup's store (restore.from) is stored without a backup of its own; a restore
// of its own store still needs spec.etcd.managed.backup, and one straight from a bucket is
// still refused, each a 422 at the field. (Who may name a source is the unit tier's,
// store's TestRestoreFromAnotherSetupNeedsGetOnItsBackup, and the end-to-end tier's: RBAC is
// off here.)
func TestRestoreFromAnotherSetupIsServed(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	ctx := t.Context()
	ops := s.client.OperatorV1alpha1()
	restore := func(spec *operatorv1alpha1.CommonShardSpec, r operatorv1alpha1.EtcdRestore) {
		withManagedEtcd(spec, false)
		spec.Etcd.Managed.Restore = &r
	}

	rs := newRootShard("copy")
	restore(&rs.Spec.CommonShardSpec, operatorv1alpha1.EtcdRestore{Snapshot: "source-20261129-010000",
		From: &operatorv1alpha1.EtcdRestoreSource{Kind: "RootShard", Name: "source"}})
	got, err := ops.RootShards(namespace).Create(ctx, rs, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NotNil(t, got.Spec.Etcd.Managed.Restore.From)
	assert.Equal(t, "source", got.Spec.Etcd.Managed.Restore.From.Name)
	assert.Nil(t, got.Spec.Etcd.Managed.Backup, "no backup of its own")

	sh := newShard("copied", "copy")
	restore(&sh.Spec.CommonShardSpec, operatorv1alpha1.EtcdRestore{Snapshot: "old-shard-20261129-010000",
		From: &operatorv1alpha1.EtcdRestoreSource{Kind: "Shard", Name: "old"}})
	_, err = ops.Shards(namespace).Create(ctx, sh, metav1.CreateOptions{})
	require.NoError(t, err)

	for _, tc := range []struct {
		name, field string
		r           operatorv1alpha1.EtcdRestore
	}{
		{"its own store without a backup", "spec.etcd.managed.backup", operatorv1alpha1.EtcdRestore{Snapshot: "own-20261129-010000"}},
		{"a source of another kind", "spec.etcd.managed.restore.from.kind", operatorv1alpha1.EtcdRestore{Snapshot: "x-20261129-010000",
			From: &operatorv1alpha1.EtcdRestoreSource{Kind: "CacheServer", Name: "cache"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newRootShard("own")
			restore(&o.Spec.CommonShardSpec, tc.r)
			_, err := ops.RootShards(namespace).Create(ctx, o, metav1.CreateOptions{})
			require.True(t, apierrors.IsInvalid(err), "a 422, got %v", err)
			assert.Contains(t, err.Error(), tc.field)
		})
	}
}
