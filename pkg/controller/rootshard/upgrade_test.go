package rootshard

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
)

// memberDeployment puts a member's Deployment, rolled out at tag, into the host's cache.
func (f *fixture) memberDeployment(t *testing.T, name, tag string) {
	one := int32(1)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "kcp", Image: "ghcr.io/kcp-dev/kcp:" + tag}}}}},
		Status: appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}}
	require.NoError(t, f.Host.Caches["deployments"].Update(d))
}

// deploymentTag is the tag of the kcp container of the Deployment name in the host's cache.
func (f *fixture) deploymentTag(t *testing.T, name string) string {
	obj, exists, err := f.Host.Caches["deployments"].GetByKey("team-a/" + name)
	require.NoError(t, err)
	require.True(t, exists, name)
	return kinds.ImageTag(obj.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Image)
}

func upgrading(rs *operatorv1alpha1.RootShard) metav1.Condition {
	c := meta.FindStatusCondition(rs.Status.Conditions, operatorv1alpha1.ConditionUpgrading)
	if c == nil {
		return metav1.Condition{}
	}
	return *c
}

// TestRootShardRollsItsSetupInOrder: a RootShard on v0.31.6 with a Shard and a FrontProxy is
// moved to v0.32.3 by spec.version alone: the root shard (and its internal proxy) first,
// then the Shard once the root shard is rolled out, then the FrontProxy; a Shard that does
// not roll out within the deadline halts the roll, with one Warning Event, and the roll goes
// on once it is ready.
func TestRootShardRollsItsSetupInOrder(t *testing.T) {
	rs := testRootShard()
	rs.Spec.Version = "v0.31.6"
	rs.Spec.Upgrade = &operatorv1alpha1.UpgradeStrategy{ProgressDeadlineSeconds: ptr.To[int32](300)}
	f := newFixture(t, rs)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	f.c.now = func() time.Time { return now }
	f.converge(t)
	stored := f.Stored(t, "team-a", "root")
	require.NotNil(t, stored.Status.Version)
	assert.Equal(t, "v0.31.6", stored.Status.Version.Current)
	assert.Equal(t, operatorv1alpha1.ReasonUpToDate, upgrading(stored).Reason)
	assert.Equal(t, "v0.31.6", f.deploymentTag(t, "root-kcp"))
	assert.Equal(t, "v0.31.6", f.deploymentTag(t, "root-proxy"), "the internal proxy runs the root shard's release")

	available := []metav1.Condition{{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "ReplicasAvailable"}}
	s := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "s1"},
		Spec:   operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}},
		Status: operatorv1alpha1.ShardStatus{Conditions: available}}
	fp := &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "edge"},
		Spec:   operatorv1alpha1.FrontProxySpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}},
		Status: operatorv1alpha1.FrontProxyStatus{Conditions: available}}
	f.Add(t, s, fp)
	f.memberDeployment(t, "s1-shard-kcp", "v0.31.6")
	f.memberDeployment(t, "edge-front-proxy", "v0.31.6")
	stored = f.syncs(t, 1)
	assert.Equal(t, []operatorv1alpha1.ComponentVersion{
		{Kind: "RootShard", Name: "root", Desired: "v0.31.6", Running: "v0.31.6"},
		{Kind: "Shard", Name: "s1", Desired: "v0.31.6", Running: "v0.31.6"},
		{Kind: "FrontProxy", Name: "edge", Desired: "v0.31.6", Running: "v0.31.6"},
	}, stored.Status.Version.Components, "the new members are recorded at what they run")

	// spec.version moves: the root shard's group starts.
	stored = stored.DeepCopy()
	stored.Spec.Version, stored.Generation = "v0.32.3", 2
	require.NoError(t, f.Caches.RootShards.Update(stored))
	_, err := f.Ours.OperatorV1alpha1().RootShards("team-a").Update(t.Context(), stored, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
	stored = f.Stored(t, "team-a", "root")
	v := stored.Status.Version
	assert.Equal(t, "v0.31.6", v.Current)
	assert.Equal(t, "v0.32.3", v.Target)
	assert.Equal(t, operatorv1alpha1.UpgradeGroupRootShard, v.Group)
	assert.Equal(t, now, v.GroupStartTime.Time.UTC())
	assert.Equal(t, metav1.ConditionTrue, upgrading(stored).Status)
	assert.Equal(t, operatorv1alpha1.ReasonUpgradeRolling, upgrading(stored).Reason)
	assert.Equal(t, "v0.31.6", kinds.ShardRelease.Built(f.c.Indexes, f.c.Host.Deployments, s).Spec.Image.Tag, "the Shard waits")

	// The root shard and its proxy roll; the Shard's group starts once they are rolled out.
	stored = f.syncs(t, 2)
	assert.Equal(t, "v0.32.3", f.deploymentTag(t, "root-kcp"))
	assert.Equal(t, "v0.32.3", f.deploymentTag(t, "root-proxy"))
	assert.Equal(t, operatorv1alpha1.UpgradeGroupShard, stored.Status.Version.Group)
	assert.Equal(t, "v0.32.3", kinds.ShardRelease.Built(f.c.Indexes, f.c.Host.Deployments, s).Spec.Image.Tag)
	assert.Nil(t, s.Spec.Image, "Built copies")
	assert.Equal(t, "v0.31.6", kinds.FrontProxyRelease.Built(f.c.Indexes, f.c.Host.Deployments, fp).Spec.Image.Tag, "the FrontProxy waits")
	assert.Equal(t, "group Shard (3 of 5) to v0.32.3: waiting for Shard/s1: its Deployment runs v0.31.6", upgrading(stored).Message)
	controllertest.Events(f.Events)

	// The Shard does not roll out within the deadline: the roll halts, once, also for a
	// reconcile that reads the RootShard from before the halt's status write (a stale cache).
	beforeHalt := stored.DeepCopy()
	now = now.Add(301 * time.Second)
	stored = f.syncs(t, 2)
	require.NoError(t, f.Caches.RootShards.Update(beforeHalt))
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
	stored = f.syncs(t, 1)
	assert.Equal(t, metav1.ConditionFalse, upgrading(stored).Status)
	assert.Equal(t, operatorv1alpha1.ReasonUpgradeHalted, upgrading(stored).Reason)
	assert.Contains(t, upgrading(stored).Message, "Shard/s1: its Deployment runs v0.31.6")
	var halted []string
	for _, e := range controllertest.Events(f.Events) {
		if strings.Contains(e, EventUpgradeHalted) {
			halted = append(halted, e)
		}
	}
	assert.Len(t, halted, 1, "one Event per halt")
	assert.Equal(t, operatorv1alpha1.UpgradeGroupShard, stored.Status.Version.Group)

	// The Shard rolls out: the roll resumes, and ends after the FrontProxy.
	f.memberDeployment(t, "s1-shard-kcp", "v0.32.3")
	stored = f.syncs(t, 1)
	assert.Equal(t, operatorv1alpha1.UpgradeGroupFrontProxy, stored.Status.Version.Group)
	assert.Equal(t, operatorv1alpha1.ReasonUpgradeRolling, upgrading(stored).Reason)
	assert.Equal(t, "v0.32.3", kinds.FrontProxyRelease.Built(f.c.Indexes, f.c.Host.Deployments, fp).Spec.Image.Tag)
	f.memberDeployment(t, "edge-front-proxy", "v0.32.3")
	stored = f.syncs(t, 1)
	assert.Empty(t, stored.Status.Version.Group)
	assert.Equal(t, "v0.32.3", stored.Status.Version.Current)
	assert.Equal(t, operatorv1alpha1.ReasonUpToDate, upgrading(stored).Reason)
	assert.Equal(t, "every component runs v0.32.3", upgrading(stored).Message)
}

// TestRootShardWithoutVersionHasNoRoll: a RootShard without spec.version has no
// status.version and no Upgrading condition, and its members build as they did.
func TestRootShardWithoutVersionHasNoRoll(t *testing.T) {
	f := newFixture(t, testRootShard())
	f.converge(t)
	stored := f.Stored(t, "team-a", "root")
	assert.Nil(t, stored.Status.Version)
	assert.Nil(t, meta.FindStatusCondition(stored.Status.Conditions, operatorv1alpha1.ConditionUpgrading))
	s := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "s1"},
		Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}}}
	f.Add(t, s)
	assert.Same(t, s, kinds.ShardRelease.Built(f.c.Indexes, f.c.Host.Deployments, s))
}

func TestNotReady(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: "m"}
	}
	available := cond(operatorv1alpha1.ConditionAvailable, metav1.ConditionTrue, "ReplicasAvailable")
	for name, tc := range map[string]struct {
		conditions []metav1.Condition
		want       string
	}{
		"ready":                       {[]metav1.Condition{available}, ""},
		"no Available yet":            {nil, "Available is not reported yet"},
		"not Available":               {[]metav1.Condition{cond("Available", "False", "ReplicasUnavailable")}, "Available=False, ReplicasUnavailable: m"},
		"kcp answers not ready":       {[]metav1.Condition{available, cond("KcpReady", "False", "NotReady")}, "KcpReady=False, NotReady: m"},
		"kcp has not registered it":   {[]metav1.Condition{available, cond("KcpReady", "False", "ShardNotRegistered")}, "KcpReady=False, ShardNotRegistered: m"},
		"kcp unreachable: holds none": {[]metav1.Condition{available, cond("KcpReady", "False", "KcpUnreachable")}, ""},
		"no dialer: holds none":       {[]metav1.Condition{available, cond("KcpReady", "Unknown", "NoKcpDialer")}, ""},
	} {
		t.Run(name, func(t *testing.T) { assert.Equal(t, tc.want, notReady(tc.conditions)) })
	}
}
