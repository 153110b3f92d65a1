package kubeconfig

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// TestTargetColumn: the Target column names each kind of target as Kind/name.
func TestTargetColumn(t *testing.T) {
	ref := &corev1.LocalObjectReference{Name: "x"}
	for want, tgt := range map[string]operator.KubeconfigTarget{
		"RootShard/x":  {RootShardRef: ref},
		"Shard/x":      {ShardRef: ref},
		"FrontProxy/x": {FrontProxyRef: ref},
		"Secret/x":     {RootShardSecretRef: ref},
		"":             {},
	} {
		assert.Equal(t, want, target(&operator.Kubeconfig{Spec: operator.KubeconfigSpec{Target: tgt}}))
	}
}
