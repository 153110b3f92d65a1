package rootshard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestEtcdBackupReady: a backup without --etcd-agent-image says so in EtcdBackupReady and
// realizes nothing of the agent; with the image, the agent and its claim are realized and the
// condition follows its Deployment; once the spec drops the backup, the condition goes, and
// so does the agent, but not the claim.
func TestEtcdBackupReady(t *testing.T) {
	rs := testRootShard()
	rs.UID = "uid-root"
	rs.Spec.Etcd = operatorv1alpha1.EtcdConfig{Managed: &operatorv1alpha1.ManagedEtcd{Backup: &operatorv1alpha1.EtcdBackup{Schedule: "0 * * * *"}}}
	f := newFixture(t, rs)
	f.Host.StoreStatefulSets(t)
	condition := func(rs *operatorv1alpha1.RootShard) *metav1.Condition {
		return meta.FindStatusCondition(rs.Status.Conditions, operatorv1alpha1.ConditionEtcdBackupReady)
	}
	sync := func(n int) *operatorv1alpha1.RootShard {
		for range n {
			require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
			f.Host.CatchUpDeletes(t)
			f.hostCatchesUp(t)
			f.Host.CatchUpStatefulSets(t)
		}
		return f.Stored(t, "team-a", "root")
	}

	got := sync(4)
	c := condition(got)
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, operatorv1alpha1.ReasonAgentImageMissing, c.Reason)
	assert.Contains(t, c.Message, "--etcd-agent-image")
	_, err := f.Host.Deployments.Deployments("team-a").Get("root-etcd-backup")
	assert.Error(t, err, "no agent without its image")

	f.Host.EtcdAgentImage = "ghcr.io/kcp-setups/apiserver:v1"
	got = sync(6)
	c = condition(got)
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionTrue, c.Status, "%+v", c)
	assert.Equal(t, operatorv1alpha1.ReasonReplicasAvailable, c.Reason)
	_, err = f.Host.Kube.CoreV1().PersistentVolumeClaims("team-a").Get(t.Context(), "root-etcd-snapshots", metav1.GetOptions{})
	require.NoError(t, err, "the snapshot claim")

	got.Spec.Etcd.Managed.Backup = nil
	_, err = f.Ours.OperatorV1alpha1().RootShards("team-a").Update(t.Context(), got, metav1.UpdateOptions{})
	require.NoError(t, err)
	f.Stored(t, "team-a", "root")
	f.Reset()
	got = sync(2)
	assert.Nil(t, condition(got), "no backup, no condition")
	assert.Contains(t, f.Writes(), "delete deployments/")
	assert.Contains(t, f.Writes(), "delete services/")
	_, err = f.Host.Kube.CoreV1().PersistentVolumeClaims("team-a").Get(t.Context(), "root-etcd-snapshots", metav1.GetOptions{})
	require.NoError(t, err, "the snapshots outlive the backup's spec")
}
