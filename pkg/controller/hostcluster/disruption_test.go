package hostcluster_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

func TestDisruptionBudgetFollowsTheReplicas(t *testing.T) {
	host := controllertest.NewHost(t)
	deployment := func(replicas int32) {
		d := workload.Deployment("s-kcp", "team-a", map[string]string{"operator.kcp.io/shard": "s"}, map[string]string{"operator.kcp.io/shard": "s"},
			&operatorv1alpha1.ComponentSpec{Replicas: ptr.To(replicas)}, corev1ac.Container().WithName("kcp"), corev1ac.PodSpec(), nil, "h", workload.KcpServer)
		_, err := host.ApplyDisruptionBudget(t.Context(), d)
		require.NoError(t, err)
	}

	deployment(2)
	assert.Equal(t, []string{"PodDisruptionBudget s-kcp"}, host.Writes(), "two replicas: a budget")
	host.Reset()
	deployment(2)
	assert.Empty(t, host.Writes(), "unchanged: no write")

	deployment(1)
	assert.Equal(t, []string{"delete poddisruptionbudgets/"}, host.Writes(), "one replica: the budget goes")
	host.Reset()
	require.NoError(t, host.Caches["poddisruptionbudgets"].Delete(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "s-kcp"}}))
	deployment(1)
	assert.Empty(t, host.Writes(), "none to delete")
}
