package shard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// withCacheCopy gives shard-1 a spec.cache.secretRef to the copy of kcp-system/cache's
// cache-client Secret in team-a.
func (f *fixture) withCacheCopy(t *testing.T) *operatorv1alpha1.Shard {
	s, err := kinds.Shard.Lister(f.c.Indexes, "team-a").Get("shard-1")
	require.NoError(t, err)
	s = s.DeepCopy()
	s.Spec.Cache = &operatorv1alpha1.CacheConfig{SecretRef: &corev1.LocalObjectReference{Name: "cache-cache-client"}}
	require.NoError(t, f.Caches.Shards.Update(s))
	_, err = f.Ours.OperatorV1alpha1().Shards("team-a").Update(t.Context(), s, metav1.UpdateOptions{})
	require.NoError(t, err)
	f.Ours.ClearActions()
	return s
}

// TestShardUsesItsCacheCopy: a Shard naming a copy of a cache-client Secret writes its
// kubeconfig toward that cache server and runs with it, whether it joins a RootShard of its
// namespace or one of a shard-join copy.
func TestShardUsesItsCacheCopy(t *testing.T) {
	for _, joined := range []bool{false, true} {
		t.Run(map[bool]string{false: "RootShard", true: "joined"}[joined], func(t *testing.T) {
			var f *fixture
			in := controllertest.NewInstallation(t)
			if joined {
				j := newJoinedFixture(t)
				f, in = j.fixture, j.in
				f.Host.PutReference(t, in.Copies[reference.ShardJoin])
			} else {
				f = newFixture(t)
				f.addRootShard(t)
			}
			s := f.withCacheCopy(t)
			f.Host.PutReference(t, in.Copies[reference.CacheClient])
			for range 4 {
				s = f.sync(t)
				f.Host.CatchUp(t)
			}
			s = f.sync(t)
			assert.Equal(t, operatorv1alpha1.PhaseRunning, s.Status.Phase, "conditions: %+v", s.Status.Conditions)
			assert.Equal(t, metav1.ConditionTrue, condition(s, operatorv1alpha1.ConditionReferenceValid).Status)
			name := shard.Server(s, reference.JoinedRootShard(shard.Kind, "team-a", "shard-1")).CacheKubeconfig()
			assert.Equal(t, "shard-1-shard-kcp-cache-kubeconfig", name)
			in.AssertCacheKubeconfig(t, f.Host, shard.Kind, "shard-1", name)
		})
	}
}

// TestShardWithAnUnusableCacheCopySaysSo: a copy of another reference Secret under the name
// is reported, naming the Secret and no key, and the Shard is not realized.
func TestShardWithAnUnusableCacheCopySaysSo(t *testing.T) {
	f := newFixture(t)
	f.addRootShard(t)
	f.withCacheCopy(t)
	in := controllertest.NewInstallation(t)
	f.Host.PutReference(t, in.CopyAs(reference.FrontProxyJoin, "cache-cache-client"))

	s := f.sync(t)
	controllertest.AssertReferenceInvalid(t, s.Status.Conditions, operatorv1alpha1.ReasonReferenceSecretInvalid, "cache-cache-client")
	assert.Equal(t, []string{"update shards/status"}, f.Host.Writes(f.Ours.Actions()))
	in.AssertNoKeyMaterial(t, s.Status.Conditions, nil)
}

// TestShardWithAnUnlabelledCacheCopySaysHowToLabelIt: a copy of a cache-client Secret
// without the reference label is reported as such, with the command that labels it as a
// cache-client copy, and realizes nothing; the label added heals the Shard.
func TestShardWithAnUnlabelledCacheCopySaysHowToLabelIt(t *testing.T) {
	f := newFixture(t)
	f.addRootShard(t)
	f.withCacheCopy(t)
	in := controllertest.NewInstallation(t)
	f.Host.PutReference(t, controllertest.Unlabelled(in.Copies[reference.CacheClient]))

	s := f.sync(t)
	controllertest.AssertReferenceNotLabelled(t, s.Status.Conditions, "cache-cache-client", reference.CacheClient)
	assert.Equal(t, []string{"update shards/status"}, f.Host.Writes(f.Ours.Actions()))

	f.Host.PutReference(t, in.Copies[reference.CacheClient])
	for range 4 {
		f.sync(t)
		f.Host.CatchUp(t)
	}
	s = f.sync(t)
	assert.Equal(t, metav1.ConditionTrue, condition(s, operatorv1alpha1.ConditionReferenceValid).Status, "conditions: %+v", s.Status.Conditions)
	assert.Equal(t, operatorv1alpha1.PhaseRunning, s.Status.Phase, "conditions: %+v", s.Status.Conditions)
}
