package localstack

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestIsBackupAgent: the runner takes the Deployments the server builds for a backup agent,
// and none that lacks the agent's component label or its owner's label, or runs another
// command; the selector it watches with selects both the agents and the members.
func TestIsBackupAgent(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(dep *appsv1.Deployment)
		want   bool
	}{
		"the server's":         {func(*appsv1.Deployment) {}, true},
		"another component":    {func(dep *appsv1.Deployment) { dep.Spec.Template.Labels["app.kubernetes.io/component"] = "etcd" }, false},
		"no owner label":       {func(dep *appsv1.Deployment) { delete(dep.Spec.Template.Labels, "operator.kcp.io/rootshard") }, false},
		"another owner's name": {func(dep *appsv1.Deployment) { dep.Spec.Template.Labels["operator.kcp.io/rootshard"] = "other" }, false},
		"no instance label":    {func(dep *appsv1.Deployment) { delete(dep.Spec.Template.Labels, "app.kubernetes.io/instance") }, false},
		"another command": {func(dep *appsv1.Deployment) {
			dep.Spec.Template.Spec.Containers[0].Command = []string{"/bin/sh"}
		}, false},
	} {
		t.Run(name, func(t *testing.T) {
			c := backupCluster("kcp", "rootshard", "root", "root", 1)
			dep := typed[appsv1.Deployment](t, c.AgentDeployment("image", "hash"))
			tc.change(dep)
			assert.Equal(t, tc.want, isBackupAgent(dep))
		})
	}
	selector, err := labels.Parse(managedEtcdSelector)
	assert.NoError(t, err)
	c := backupCluster("kcp", "rootshard", "root", "root", 1)
	assert.True(t, selector.Matches(labels.Set(typed[appsv1.Deployment](t, c.AgentDeployment("image", "hash")).Labels)), "the agent's Deployment")
	assert.True(t, selector.Matches(labels.Set(typed[appsv1.StatefulSet](t, c.StatefulSet("hash")).Labels)), "the members' StatefulSet")
}

// TestEtcdOfAnAgent: an agent's etcd is the StatefulSet of the same owner in its namespace;
// not another owner's, not one of an owner of another kind by the same name, not one being
// deleted, not one of another namespace.
func TestEtcdOfAnAgent(t *testing.T) {
	root := backupCluster("kcp", "rootshard", "root", "root", 1)
	dep := typed[appsv1.Deployment](t, root.AgentDeployment("image", "hash"))
	own := typed[appsv1.StatefulSet](t, root.StatefulSet("hash"))
	other := typed[appsv1.StatefulSet](t, backupCluster("kcp", "rootshard", "other", "other", 1).StatefulSet("hash"))
	shard := typed[appsv1.StatefulSet](t, backupCluster("kcp", "shard", "root", "root-shard", 1).StatefulSet("hash"))
	elsewhere := typed[appsv1.StatefulSet](t, backupCluster("team-b", "rootshard", "root", "root", 1).StatefulSet("hash"))

	assert.Same(t, own, etcdOf(dep, []*appsv1.StatefulSet{other, shard, elsewhere, own}))
	assert.Nil(t, etcdOf(dep, []*appsv1.StatefulSet{other, shard, elsewhere}))
	deleting := own.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	assert.Nil(t, etcdOf(dep, []*appsv1.StatefulSet{deleting}))
}
