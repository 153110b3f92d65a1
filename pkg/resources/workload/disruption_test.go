package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

func TestDisruptionBudget(t *testing.T) {
	labels := map[string]string{"app.kubernetes.io/managed-by": "kcp-setups", "operator.kcp.io/shard": "s"}
	selector := map[string]string{"app.kubernetes.io/instance": "s", "operator.kcp.io/shard": "s"}
	deployment := func(replicas *int32) *appsv1ac.DeploymentApplyConfiguration {
		return Deployment("s-kcp", "team-a", labels, selector, &operatorv1alpha1.ComponentSpec{Replicas: replicas},
			corev1ac.Container().WithName("kcp"), corev1ac.PodSpec(), nil, "hash", KcpServer)
	}

	pdb := DisruptionBudget(deployment(nil))
	require.NotNil(t, pdb, "the default of 2 replicas has a budget")
	assert.Equal(t, "s-kcp", *pdb.Name)
	assert.Equal(t, "team-a", *pdb.Namespace)
	assert.Equal(t, labels, pdb.Labels, "owner labels, as on the Deployment")
	assert.Equal(t, selector, pdb.Spec.Selector.MatchLabels, "the Deployment's pods")
	assert.Equal(t, intstr.FromInt32(1), *pdb.Spec.MaxUnavailable)
	assert.Nil(t, pdb.Spec.MinAvailable)

	assert.NotNil(t, DisruptionBudget(deployment(ptr.To[int32](5))))
	assert.Nil(t, DisruptionBudget(deployment(ptr.To[int32](1))), "one replica: a budget would block every drain")
	assert.Nil(t, DisruptionBudget(deployment(ptr.To[int32](0))))
}
