package localstack

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// serversStatefulSet is a managed etcd's StatefulSet as the server's builder makes it.
func serversStatefulSet(t *testing.T) *appsv1.StatefulSet {
	t.Helper()
	c := &etcd.Cluster{Kind: "rootshard", OwnerName: "root", Base: "root", Namespace: "kcp", ClusterDomain: "cluster.local",
		RootShard: "root", Spec: &operatorv1alpha1.ManagedEtcd{}}
	data, err := json.Marshal(c.StatefulSet("hash"))
	require.NoError(t, err)
	var sts appsv1.StatefulSet
	require.NoError(t, json.Unmarshal(data, &sts))
	return &sts
}

// TestIsManagedEtcd: the runner takes the StatefulSets the server builds for a managed etcd,
// and none that lacks the etcd component's label, its owner's label or a container named etcd.
func TestIsManagedEtcd(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(sts *appsv1.StatefulSet)
		want   bool
	}{
		"the server's":         {func(*appsv1.StatefulSet) {}, true},
		"another component":    {func(sts *appsv1.StatefulSet) { sts.Spec.Template.Labels["app.kubernetes.io/component"] = "kcp" }, false},
		"no owner label":       {func(sts *appsv1.StatefulSet) { delete(sts.Spec.Template.Labels, "operator.kcp.io/rootshard") }, false},
		"another owner's name": {func(sts *appsv1.StatefulSet) { sts.Spec.Template.Labels["operator.kcp.io/rootshard"] = "other" }, false},
		"no instance label":    {func(sts *appsv1.StatefulSet) { delete(sts.Spec.Template.Labels, "app.kubernetes.io/instance") }, false},
		"no etcd container": {func(sts *appsv1.StatefulSet) {
			sts.Spec.Template.Spec.Containers[0].Name = "db"
		}, false},
	} {
		t.Run(name, func(t *testing.T) {
			sts := serversStatefulSet(t)
			tc.change(sts)
			assert.Equal(t, tc.want, isManagedEtcd(sts))
		})
	}
}

// TestTemplateHashFollowsWhatTheMembersRun: the pod template (a renewed certificate's Secrets'
// hash among its annotations) and the replicas change the hash; the StatefulSet's status
// and its own metadata do not.
func TestTemplateHashFollowsWhatTheMembersRun(t *testing.T) {
	base := serversStatefulSet(t)
	want, err := templateHash(base.Spec.Replicas, base.Spec.Template)
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		change  func(sts *appsv1.StatefulSet)
		changes bool
	}{
		"the Secrets' hash": {func(sts *appsv1.StatefulSet) {
			sts.Spec.Template.Annotations["operator.kcp.io/secrets-hash"] = "renewed"
		}, true},
		"the args":            {func(sts *appsv1.StatefulSet) { sts.Spec.Template.Spec.Containers[0].Args = nil }, true},
		"the replicas":        {func(sts *appsv1.StatefulSet) { sts.Spec.Replicas = new(int32(5)) }, true},
		"the status":          {func(sts *appsv1.StatefulSet) { sts.Status.ReadyReplicas = 2 }, false},
		"its own labels":      {func(sts *appsv1.StatefulSet) { sts.Labels["example.com/x"] = "y" }, false},
		"its resourceVersion": {func(sts *appsv1.StatefulSet) { sts.ResourceVersion = "42" }, false},
	} {
		t.Run(name, func(t *testing.T) {
			sts := base.DeepCopy()
			if sts.Spec.Template.Annotations == nil {
				sts.Spec.Template.Annotations = map[string]string{}
			}
			if sts.Labels == nil {
				sts.Labels = map[string]string{}
			}
			tc.change(sts)
			got, err := templateHash(sts.Spec.Replicas, sts.Spec.Template)
			require.NoError(t, err)
			assert.Equal(t, tc.changes, got != want)
		})
	}
}

// TestMembersKeepTheirPorts: planned again with their ports as prior (a restart with a new
// template, or the next run of a kept stack through ports.json), the members listen and
// advertise where they did, and no port is allocated.
func TestMembersKeepTheirPorts(t *testing.T) {
	f := newFixture(t)
	dir, next := t.TempDir(), 30000
	first, err := planEtcdMembers(etcdMembersEnv{dir: dir}, f.StatefulSet, f.Secrets, func() (int, error) {
		next++
		return next, nil
	})
	require.NoError(t, err)

	require.NoError(t, savePorts(dir, first.ports))
	prior := loadPorts(dir)
	assert.Equal(t, first.ports, prior)

	f.StatefulSet.Spec.Template.Annotations = map[string]string{"operator.kcp.io/secrets-hash": "renewed"}
	again, err := planEtcdMembers(etcdMembersEnv{dir: dir, prior: prior}, f.StatefulSet, f.Secrets, func() (int, error) {
		t.Fatal("no port is allocated")
		return 0, nil
	})
	require.NoError(t, err)
	assert.Equal(t, first.Members(), again.Members())
	assert.Nil(t, loadPorts(t.TempDir()), "no record, no ports")
}
