package rootshard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// TestRootShardFollowsTheServiceAccountKeysOfItsShards: a Shard's service-account Secret
// re-reconciles the root shard that verifies its tokens.
func TestRootShardFollowsTheServiceAccountKeysOfItsShards(t *testing.T) {
	f := newFixture(t, testRootShard())
	f.Add(t, &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: "shard-1", Namespace: "team-a"},
		Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}}})
	c := f.c

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shard-1-service-account",
		Labels: pki.Labels("shard", "shard-1", "service-account")}}
	assert.Equal(t, []string{"team-a/root"}, c.Watches().Owners(c.Name)(secret))
	secret.Labels[pki.LabelComponent] = "server"
	assert.Empty(t, c.Watches().Owners(c.Name)(secret))
}
