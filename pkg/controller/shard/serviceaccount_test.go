package shard

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

func (f *fixture) addShard(t *testing.T, name, rootShard string) {
	require.NoError(t, f.Caches.Shards.Add(&operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"},
		Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: rootShard}}}}))
}

func serviceAccountSecret(owner, ownerKind string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: owner + "-service-account", ResourceVersion: "1",
		Labels: pki.Labels(ownerKind, owner, "service-account")}}
}

// TestShardsOfARootShardFollowEachOther: a Shard joining or leaving, or its service-account
// Secret changing, re-reconciles the other Shards of its RootShard, and only them.
func TestShardsOfARootShardFollowEachOther(t *testing.T) {
	f := newFixture(t)
	f.addShard(t, "shard-2", "root")
	f.addShard(t, "elsewhere", "other-root")
	s2, err := kinds.Shard.Lister(f.c.Indexes, "team-a").Get("shard-2")
	require.NoError(t, err)

	assert.Equal(t, []string{"team-a/shard-1"}, f.c.siblings(s2))
	assert.ElementsMatch(t, []string{"team-a/shard-2", "team-a/shard-1"}, f.c.Watches().Owners(f.c.Name)(serviceAccountSecret("shard-2", "shard")))
	server := serviceAccountSecret("shard-2", "shard")
	server.Labels[pki.LabelComponent] = "server"
	assert.Equal(t, []string{"team-a/shard-2"}, f.c.Watches().Owners(f.c.Name)(server), "a Shard's other Secrets concern it alone")
	assert.ElementsMatch(t, []string{"team-a/shard-1", "team-a/shard-2"}, f.c.Watches().Owners(f.c.Name)(serviceAccountSecret("root", "rootshard")))
}

// TestDeploymentVerifiesTheServiceAccountKeysThatExist: with auth.serviceAccount enabled, the
// shard's Deployment mounts the public key of the root shard and of every other shard whose
// Secret exists; a shard whose Secret is not issued yet is left out instead of holding back
// the rollout.
func TestDeploymentVerifiesTheServiceAccountKeysThatExist(t *testing.T) {
	f := newFixture(t)
	f.addRootShard(t)
	s, err := f.Ours.OperatorV1alpha1().Shards("team-a").Get(t.Context(), "shard-1", metav1.GetOptions{})
	require.NoError(t, err)
	s.Spec.Auth = &operatorv1alpha1.AuthSpec{ServiceAccount: &operatorv1alpha1.ServiceAccountAuthentication{Enabled: true}}
	s, err = f.Ours.OperatorV1alpha1().Shards("team-a").Update(t.Context(), s, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, f.Caches.Shards.Update(s))
	f.addShard(t, "shard-2", "root")
	f.addShard(t, "shard-3", "root") // not issued yet
	f.addShard(t, "elsewhere", "other-root")
	for _, secret := range []*corev1.Secret{serviceAccountSecret("root", "rootshard"), serviceAccountSecret("shard-2", "shard"), serviceAccountSecret("elsewhere", "shard")} {
		require.NoError(t, f.Host.Caches["secrets"].Add(secret))
	}
	for range 4 {
		f.sync(t)
		f.Host.CatchUp(t)
	}
	objs := f.Host.Caches["deployments"].List()
	require.Len(t, objs, 1)
	d := objs[0].(*appsv1.Deployment)
	keys := slices.DeleteFunc(slices.Clone(d.Spec.Template.Spec.Containers[0].Args), func(a string) bool {
		return !strings.HasPrefix(a, "--service-account-key-file=")
	})
	assert.Equal(t, []string{
		"--service-account-key-file=/etc/kcp/tls/service-account/tls.crt",
		"--service-account-key-file=/etc/kcp/tls/service-account-keys/root/tls.crt",
		"--service-account-key-file=/etc/kcp/tls/service-account-keys/shard-2/tls.crt",
	}, keys)
}
