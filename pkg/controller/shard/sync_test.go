package shard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
)

// fixture is a Shard Controller over a fake host and hand-fed caches: a unit test of sync
// alone.
type fixture struct {
	*controllertest.Fixture[*operatorv1alpha1.Shard, operatorv1alpha1.ShardStatus]
	c *Controller
}

func newFixture(t *testing.T) *fixture {
	s := &operatorv1alpha1.Shard{
		ObjectMeta: metav1.ObjectMeta{Name: "shard-1", Namespace: "team-a", UID: shardUID, Generation: 1, Finalizers: []string{kinds.Shard.Finalizer()}},
		Spec: operatorv1alpha1.ShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{ClusterDomain: "cluster.local",
				Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}},
			RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}},
		},
	}
	f := &fixture{Fixture: controllertest.NewFixture(t, kinds.Shard, s)}
	f.c = controllertest.ControllerOf[Controller](f.Fixture)
	return f
}

func (f *fixture) addRootShard(t *testing.T) {
	require.NoError(t, f.Caches.RootShards.Add(&operatorv1alpha1.RootShard{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{ClusterDomain: "cluster.local"},
			External:        operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 6443},
		},
	}))
	// What the RootShard controller and cert-manager realized for the root shard, and the
	// shard's pods mount.
	for _, name := range []string{"root-ca", "root-merged-client-ca", "root-server-ca", "root-requestheader-client-ca"} {
		require.NoError(t, f.Host.Caches["secrets"].Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, ResourceVersion: "1"}}))
	}
}

func TestDeploymentWaitsForTheRootShardsSecrets(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, f.Caches.RootShards.Add(&operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"}}))
	for range 3 {
		f.sync(t)
		f.Host.CatchUp(t)
	}
	assert.Empty(t, f.Host.Caches["deployments"].List(), "no Deployment before the root shard's CAs and bundles exist")
}

// sync syncs the Shard and lets its cache hold what the controller wrote to it.
func (f *fixture) sync(t *testing.T) *operatorv1alpha1.Shard {
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/shard-1"))
	return f.Stored(t, "team-a", "shard-1")
}

func TestShardWithoutRootShardSaysSoAndHeals(t *testing.T) {
	f := newFixture(t)
	s := f.sync(t)
	cond := meta.FindStatusCondition(s.Status.Conditions, operatorv1alpha1.ConditionReferenceValid)
	require.NotNil(t, cond)
	assert.Equal(t, metav1.ConditionFalse, cond.Status)
	assert.Equal(t, operatorv1alpha1.ReasonRootShardNotFound, cond.Reason)
	assert.Equal(t, []string{"update shards/status"}, f.Host.Writes(f.Ours.Actions()), "nothing is realized without a RootShard")
	rootShard := meta.FindStatusCondition(s.Status.Conditions, operatorv1alpha1.ConditionRootShard)
	require.NotNil(t, rootShard, "kcp-operator's RootShard condition")
	assert.Equal(t, metav1.ConditionFalse, rootShard.Status)
	assert.Equal(t, "InvalidReference", rootShard.Reason, "kcp-operator's reason")
	assert.Equal(t, `RootShard "root" does not exist in namespace "team-a"`, rootShard.Message)

	f.addRootShard(t)
	for range 4 {
		s = f.sync(t)
		f.Host.CatchUp(t)
	}
	assert.True(t, meta.IsStatusConditionTrue(s.Status.Conditions, operatorv1alpha1.ConditionReferenceValid))
	assert.Equal(t, operatorv1alpha1.PhaseRunning, s.Status.Phase, "conditions: %+v", s.Status.Conditions)
	rootShard = meta.FindStatusCondition(s.Status.Conditions, operatorv1alpha1.ConditionRootShard)
	require.NotNil(t, rootShard)
	assert.Equal(t, metav1.ConditionTrue, rootShard.Status)
	assert.Equal(t, "Valid", rootShard.Reason, "kcp-operator's reason")
}

func TestResyncOfARealizedShardWritesNothing(t *testing.T) {
	f := newFixture(t)
	f.addRootShard(t)
	for range 4 {
		f.sync(t)
		f.Host.CatchUp(t)
	}
	f.Host.Reset()
	f.Ours.ClearActions()

	f.sync(t)
	assert.Empty(t, f.Host.Writes(f.Ours.Actions()), "a resync of an unchanged, realized Shard must not write")
}

// TestShardClientCABundleRefIsMergedAndMounted checks that a Shard's clientCABundleRef gets
// its own client CA bundle, on top of its RootShard's merged one, which its pods mount; and
// that the Deployment waits for that bundle.
func TestShardClientCABundleRefIsMergedAndMounted(t *testing.T) {
	f := newFixture(t)
	f.addRootShard(t)
	s, err := kinds.Shard.Lister(f.c.Indexes, "team-a").Get("shard-1")
	require.NoError(t, err)
	s = s.DeepCopy()
	s.Spec.ClientCABundleRef = &corev1.LocalObjectReference{Name: "partner-ca"}
	require.NoError(t, f.Caches.Shards.Update(s))
	_, err = f.Host.Kube.CoreV1().Secrets("team-a").Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "partner-ca"}, Data: map[string][]byte{"tls.crt": []byte("PARTNER-CA")}}, metav1.CreateOptions{})
	require.NoError(t, err)

	for range 3 {
		f.sync(t)
		f.Host.CatchUp(t)
	}
	_, exists, err := f.Host.Caches["secrets"].GetByKey("team-a/shard-1-merged-client-ca")
	require.NoError(t, err)
	assert.False(t, exists, "nothing to merge into before the RootShard's merged client CA has content")
	assert.Empty(t, f.Host.Caches["deployments"].List(), "the Deployment waits for the bundle it mounts")

	require.NoError(t, f.Host.Caches["secrets"].Update(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root-merged-client-ca", ResourceVersion: "2"},
		Data: map[string][]byte{"tls.crt": []byte("ROOT-CLIENT-CAS\n")}}))
	for range 3 {
		f.sync(t)
		f.Host.CatchUp(t)
	}
	obj, exists, err := f.Host.Caches["secrets"].GetByKey("team-a/shard-1-merged-client-ca")
	require.NoError(t, err)
	require.True(t, exists)
	assert.Equal(t, "ROOT-CLIENT-CAS\nPARTNER-CA\n", string(obj.(*corev1.Secret).Data["tls.crt"]))
	require.Len(t, f.Host.Caches["deployments"].List(), 1)
	assert.Contains(t, f.c.mounting("team-a", "partner-ca"), "team-a/shard-1", "a change to the user's Secret rebuilds the bundle")
}
