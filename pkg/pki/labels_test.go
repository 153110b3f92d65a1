package pki

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWorkloadLabels: a workload carries kcp-operator's name and component labels next to the
// server's own, and its pods the same, except where the selector says otherwise; the
// managed-by label stays the server's, by which it finds what it owns.
func TestWorkloadLabels(t *testing.T) {
	labels := WorkloadLabels("rootshard", "root", RootShardWorkload)
	assert.Equal(t, map[string]string{
		"app.kubernetes.io/name": "kcp", "app.kubernetes.io/instance": "root", "app.kubernetes.io/component": "rootshard",
		"app.kubernetes.io/managed-by": "kcp-setups", "operator.kcp.io/rootshard": "root",
	}, labels)

	selector := map[string]string{"app.kubernetes.io/instance": "root", "app.kubernetes.io/component": "kcp", "operator.kcp.io/rootshard": "root"}
	pods := PodLabels(labels, selector)
	for k, v := range selector {
		assert.Equal(t, v, pods[k], "the pods match the selector, which never changes")
	}
	assert.Equal(t, "kcp", pods["app.kubernetes.io/name"])
	assert.Equal(t, "kcp-setups", pods["app.kubernetes.io/managed-by"])
	assert.Equal(t, "rootshard", labels["app.kubernetes.io/component"], "PodLabels leaves the workload's labels alone")
}
