package kubeconfigrequest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// TestALinkedShardMintsNothing: the front-proxy-client CA's key is not in a linked Shard's
// cluster, so its kubeconfig subresource is a 409 that says where to mint, not a signature.
func TestALinkedShardMintsNothing(t *testing.T) {
	_, err := Resolvers{}.parent(t.Context(), "Shard", shard.Kind, reference.ShardJoin, &metav1.ObjectMeta{Namespace: "team-a", Name: "eu"},
		operatorv1alpha1.RootShardConfig{Link: &operatorv1alpha1.RootShardLink{SecretRef: corev1.LocalObjectReference{Name: "eu-1-link-bootstrap"}}})
	require.Error(t, err)
	assert.True(t, apierrors.IsConflict(err), "%v", err)
	assert.Contains(t, err.Error(), "joins its RootShard over a link")
}
