package rootshard

import (
	"context"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// TestARestoreStartsNothingBeforeItsSnapshotPassesItsCheck: a RootShard whose managed etcd
// restores a snapshot creates no StatefulSet (and no empty cluster) until the snapshot passed
// its check; then the members restore it in an init container, which goes once every
// member is ready, and EtcdRestored turns True.
func TestARestoreStartsNothingBeforeItsSnapshotPassesItsCheck(t *testing.T) {
	rs := testRootShard()
	rs.Spec.Etcd = operatorv1alpha1.EtcdConfig{Managed: &operatorv1alpha1.ManagedEtcd{
		Backup:  &operatorv1alpha1.EtcdBackup{Store: operatorv1alpha1.EtcdSnapshotStore{Volume: &operatorv1alpha1.EtcdSnapshotVolume{}}},
		Restore: &operatorv1alpha1.EtcdRestore{Snapshot: "root-20261128-101500"},
	}}
	f, restored, sync := restoreFixture(t, rs)
	for range 4 {
		sync()
	}
	assert.Empty(t, f.Host.Caches["statefulsets"].List(), "nothing starts before the snapshot passed its check")
	c := restored()
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Contains(t, []string{operatorv1alpha1.ReasonRestoreVerifying, operatorv1alpha1.ReasonRestoreSourceUnavailable}, c.Reason,
		"the fixture has no agent to answer: %s", c.Message)

	// The snapshot passed its check (as the agent would answer).
	answered := make(chan struct{})
	f.c.Host.EtcdRestores.Forget("team-a/root-etcd/root-20261128-101500")
	f.c.Host.EtcdRestores.Check("team-a/root-etcd/root-20261128-101500", func(context.Context) error { return nil }, func() { close(answered) })
	<-answered
	sync()
	sts := f.Host.Caches["statefulsets"].List()
	require.Len(t, sts, 1, "the StatefulSet is created once the snapshot passed")
	snapshot, ok := etcd.RestoringSnapshot(sts[0].(*appsv1.StatefulSet))
	assert.True(t, ok, "its members restore the snapshot before etcd starts")
	assert.Equal(t, "root-20261128-101500", snapshot)
	assert.Equal(t, operatorv1alpha1.ReasonRestoring, restored().Reason)

	// Every member ready: the init container goes, and the restore is done.
	f.Host.CatchUpStatefulSets(t)
	sync()
	f.Host.CatchUpStatefulSets(t)
	sync()
	_, ok = etcd.RestoringSnapshot(f.Host.Caches["statefulsets"].List()[0].(*appsv1.StatefulSet))
	assert.False(t, ok, "the restore init container goes once every member started")
	c = restored()
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Equal(t, operatorv1alpha1.ReasonRestored, c.Reason)
}

// TestARestoreFromAnotherSetupReadsWithItsOwnClientCertificate: a new RootShard restores a
// snapshot of another RootShard's store: nothing starts while the source cannot serve it
// (SourceUnavailable); then the check goes to the source's store, the members' client
// certificate toward the source's agent is issued by the source's etcd client CA before the
// StatefulSet starts from it, and it is deleted once every member started.
func TestARestoreFromAnotherSetupReadsWithItsOwnClientCertificate(t *testing.T) {
	rs := testRootShard()
	rs.UID = "uid-root"
	rs.Spec.Etcd = operatorv1alpha1.EtcdConfig{Managed: &operatorv1alpha1.ManagedEtcd{
		Restore: &operatorv1alpha1.EtcdRestore{Snapshot: "source-20261128-101500",
			From: &operatorv1alpha1.EtcdRestoreSource{Kind: "RootShard", Name: "source"}},
	}}
	f, restored, sync := restoreFixture(t, rs)
	const restoreClient = "team-a/root-etcd-restore-client"
	for range 3 {
		sync()
	}
	assert.Empty(t, f.Host.Caches["statefulsets"].List(), "nothing starts from a source that does not exist")
	c := restored()
	require.NotNil(t, c)
	assert.Equal(t, operatorv1alpha1.ReasonRestoreSourceUnavailable, c.Reason)
	assert.Contains(t, c.Message, `RootShard "source"`)

	source := testRootShard()
	source.Name = "source"
	source.Spec.Etcd = operatorv1alpha1.EtcdConfig{Managed: &operatorv1alpha1.ManagedEtcd{}}
	f.Add(t, source)
	sync()
	assert.Contains(t, restored().Message, "no spec.etcd.managed.backup", "a source without a backup has no agent to serve its store")
	assert.Empty(t, f.Host.Caches["statefulsets"].List())

	source.Spec.Etcd.Managed.Backup = &operatorv1alpha1.EtcdBackup{}
	require.NoError(t, f.Caches.RootShards.Update(source))
	// The check is the source store's: as its agent would answer.
	key := "team-a/root-etcd/source-20261128-101500 from team-a/source-etcd"
	answered := make(chan struct{})
	f.c.Host.EtcdRestores.Check(key, func(context.Context) error { return nil }, func() { close(answered) })
	<-answered
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
	o, exists, err := f.Host.Caches["certificates"].GetByKey(restoreClient)
	require.NoError(t, err)
	require.True(t, exists, "the members' client certificate toward the source's agent")
	cert := o.(*cmv1.Certificate)
	assert.Equal(t, "source-etcd-client-ca", cert.Spec.IssuerRef.Name, "issued by the source's etcd client CA, which its agent trusts")
	assert.Equal(t, "uid-root", cert.Labels["operator.kcp.io/owner-uid"], "the restoring RootShard's")
	assert.Empty(t, f.Host.Caches["statefulsets"].List(), "the StatefulSet waits for its Secret")

	f.hostCatchesUp(t)
	sync()
	assert.Empty(t, f.Host.Caches["statefulsets"].List(), "the StatefulSet waits for the source's etcd client trust too")
	f.Add(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "source-etcd-client-trust", ResourceVersion: "1"}})
	sync()
	sts := f.Host.Caches["statefulsets"].List()
	require.Len(t, sts, 1, "the StatefulSet is created once the certificate is issued")
	r := etcd.RestoringOf(sts[0].(*appsv1.StatefulSet))
	require.NotNil(t, r, "its members restore the snapshot before etcd starts")
	assert.Equal(t, "https://source-etcd-backup.team-a.svc.cluster.local:2390", r.SourceURL, "from the source's agent")
	assert.Equal(t, "root-etcd-restore-client", r.ClientSecret)
	assert.Equal(t, "source-etcd-client-trust", r.SourceTrust, "trusting the source's agent by its RootShard's etcd client CA alone")
	assert.Equal(t, operatorv1alpha1.ReasonRestoring, restored().Reason)
	for _, name := range []string{"team-a/root-etcd-server", "team-a/root-etcd-client"} {
		o, exists, err := f.Host.Caches["certificates"].GetByKey(name)
		require.NoError(t, err)
		require.True(t, exists, name)
		assert.Equal(t, "root-etcd-client-ca", o.(*cmv1.Certificate).Spec.IssuerRef.Name, "the new setup's own certificates are of its own CA")
	}

	// Every member ready: the init container goes, the restore is done, and the client
	// certificate of the source's CA goes once the members run without it.
	for range 3 {
		f.Host.CatchUpStatefulSets(t)
		sync()
		f.Host.CatchUpDeletes(t)
	}
	assert.Nil(t, etcd.RestoringOf(f.Host.Caches["statefulsets"].List()[0].(*appsv1.StatefulSet)))
	c = restored()
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Equal(t, operatorv1alpha1.ReasonRestored, c.Reason)
	for _, cache := range []string{"certificates", "secrets"} {
		_, exists, err := f.Host.Caches[cache].GetByKey(restoreClient)
		require.NoError(t, err)
		assert.False(t, exists, "the restore client certificate goes once every member started: %s", cache)
	}
}

// restoreFixture is a fixture of rs whose host stores StatefulSets and whose server has the
// agent image, with rs's EtcdRestored condition as stored, and a sync of rs after which the
// host catches up.
func restoreFixture(t *testing.T, rs *operatorv1alpha1.RootShard) (*fixture, func() *metav1.Condition, func()) {
	f := newFixture(t, rs)
	f.Host.StoreStatefulSets(t)
	f.c.Host.EtcdAgentImage = "ghcr.io/kcp-setups/apiserver:v1"
	restored := func() *metav1.Condition {
		got, err := kinds.RootShard.Lister(f.c.Indexes, "team-a").Get("root")
		require.NoError(t, err)
		return meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionEtcdRestored)
	}
	sync := func() {
		require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
		f.hostCatchesUp(t)
	}
	return f, restored, sync
}
