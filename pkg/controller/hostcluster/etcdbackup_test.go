package hostcluster_test

import (
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// backupCluster is RootShard root's managed etcd, with a backup to a volume when backup.
func backupCluster(backup bool) *etcd.Cluster {
	spec := &operatorv1alpha1.CommonShardSpec{Etcd: operatorv1alpha1.EtcdConfig{Managed: &operatorv1alpha1.ManagedEtcd{Replicas: ptr.To[int32](1)}}}
	if backup {
		spec.Etcd.Managed.Backup = &operatorv1alpha1.EtcdBackup{Schedule: "0 * * * *"}
	}
	return etcd.New("rootshard", &metav1.ObjectMeta{Name: "root", Namespace: "team-a", UID: "uid-1"}, spec, "root", "root")
}

// TestEtcdBackupAgent: the agent is realized only with an image; its snapshot claim is created
// once (planned as a create while it does not exist) and refused when it is another's; once
// the spec drops the backup, the agent's Deployment, Service, Certificate and Secret that
// carry the owner's UID are deleted, each with its UID as a precondition, another's stays,
// and the claim is never deleted there.
func TestEtcdBackupAgent(t *testing.T) {
	host := controllertest.NewHost(t)
	ctx := hostcluster.WithOwner(t.Context(), hostcluster.Owner{Kind: "rootshard", Name: "root", UID: "uid-1"})
	realize := func(e *etcd.Cluster) (bool, int, error) {
		t.Helper()
		w := host.Host.Writes(ctx)
		ok := w.EtcdBackupAgent(e)
		wrote, err := w.Done()
		return ok, wrote, err
	}

	ok, wrote, err := realize(backupCluster(true))
	require.NoError(t, err)
	assert.False(t, ok, "without --etcd-agent-image it says so")
	assert.Zero(t, wrote)
	assert.Empty(t, host.Writes(), "and realizes nothing")

	host.EtcdAgentImage = "ghcr.io/kcp-setups/apiserver:v1"
	p := &hostcluster.Plan{}
	w := host.Host.Writes(hostcluster.Planning(ctx, p))
	assert.True(t, w.EtcdBackupAgent(backupCluster(true)))
	_, err = w.Done()
	require.NoError(t, err)
	require.Len(t, p.Claims, 1, "a plan shows the claim it would create")
	assert.Equal(t, "root-etcd-snapshots", *p.Claims[0].Name)
	assert.Empty(t, host.Writes(), "a plan writes nothing")

	ok, _, err = realize(backupCluster(true))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, []string{"Service root-etcd-backup", "create persistentvolumeclaims/"}, host.Writes(),
		"the claim and the Service; the Deployment waits for its Secrets")
	claim, err := host.Kube.CoreV1().PersistentVolumeClaims("team-a").Get(ctx, "root-etcd-snapshots", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "uid-1", claim.Labels[pki.LabelOwnerUID])

	host.Reset()
	p = &hostcluster.Plan{}
	w = host.Host.Writes(hostcluster.Planning(ctx, p))
	w.EtcdBackupAgent(backupCluster(true))
	assert.Empty(t, p.Claims, "a claim that exists is not planned")
	_, _, err = realize(backupCluster(true))
	require.NoError(t, err)
	assert.Empty(t, host.Writes(), "the claim is created once, the rest is unchanged")

	// Another's claim of the name is refused, not used.
	claim.Labels[pki.LabelOwnerUID] = "uid-other"
	_, err = host.Kube.CoreV1().PersistentVolumeClaims("team-a").Update(ctx, claim, metav1.UpdateOptions{})
	require.NoError(t, err)
	_, _, err = realize(backupCluster(true))
	require.ErrorContains(t, err, `the snapshot claim team-a/root-etcd-snapshots exists and is not this rootshard's (owner UID "uid-other")`)

	// The spec drops the backup: what the agent was goes, by the owner's UID.
	labels := func(uid string) map[string]string {
		return map[string]string{pki.LabelManagedBy: pki.ManagedBy, pki.OwnerLabel("rootshard"): "root", pki.LabelOwnerUID: uid}
	}
	meta := func(uid string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "team-a", Name: "root-etcd-backup", UID: types.UID("obj-" + uid), Labels: labels(uid)}
	}
	require.NoError(t, host.Caches["certificates"].Add(&cmv1.Certificate{ObjectMeta: meta("uid-1")}))
	require.NoError(t, host.Caches["secrets"].Add(&corev1.Secret{ObjectMeta: meta("uid-1")}))
	require.NoError(t, host.Caches["deployments"].Add(&appsv1.Deployment{ObjectMeta: meta("uid-1")}))
	// Another's Service of the name, for this test.
	require.NoError(t, host.Caches["services"].Update(&corev1.Service{ObjectMeta: meta("uid-other")}))
	host.Reset()
	ok, wrote, err = realize(backupCluster(false))
	require.NoError(t, err)
	assert.True(t, ok)
	var deleted []string
	for _, a := range append(host.Kube.Actions(), host.CM.Actions()...) {
		if d, isDelete := a.(clienttesting.DeleteActionImpl); isDelete {
			deleted = append(deleted, d.Resource.Resource+"/"+d.Name)
			require.NotNil(t, d.DeleteOptions.Preconditions)
			assert.Equal(t, types.UID("obj-uid-1"), *d.DeleteOptions.Preconditions.UID, "the UID of the object read")
		}
	}
	assert.Equal(t, []string{"deployments/root-etcd-backup", "secrets/root-etcd-backup", "certificates/root-etcd-backup"}, deleted,
		"its Deployment, Certificate and Secret; the Service is another's, the claim stays")
	assert.Zero(t, wrote, "none was there to delete in the fake host's API, only in its caches")
}
