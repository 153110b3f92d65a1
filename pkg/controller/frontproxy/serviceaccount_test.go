package frontproxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// TestFrontProxiesFollowTheShardsOfTheirRootShard: a Shard joining or leaving, or its
// service-account Secret changing, re-reconciles the FrontProxies of its RootShard only.
func TestFrontProxiesFollowTheShardsOfTheirRootShard(t *testing.T) {
	f := controllertest.NewFixture(t, kinds.FrontProxy)
	for name, rs := range map[string]string{"edge": "root", "other-edge": "other-root"} {
		f.Add(t, &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"},
			Spec: operatorv1alpha1.FrontProxySpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: rs}}}})
	}
	s := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: "shard-1", Namespace: "team-a"},
		Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}}}
	f.Add(t, s)
	c := controllertest.ControllerOf[Controller](f)

	assert.Equal(t, []string{"team-a/edge"}, c.ofShard(s))
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shard-1-service-account",
		Labels: pki.Labels("shard", "shard-1", "service-account")}}
	assert.Equal(t, []string{"team-a/edge"}, c.Watches().Owners(c.Name)(secret))
	secret.Labels[pki.LabelComponent] = "server"
	assert.Empty(t, c.Watches().Owners(c.Name)(secret), "a Shard's other Secrets are not the front proxy's concern")
}
