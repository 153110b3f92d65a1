package e2e

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestControllersAreLeaderElected checks that the controllers hold the Lease.
func TestControllersAreLeaderElected(t *testing.T) {
	holder := kubectl(t, "get", "lease", "kcp-setups-controllers", "-n", "kube-system", "-o", "jsonpath={.spec.holderIdentity}")
	assert.NotEmpty(t, holder)
}

// TestReconcileMetrics checks the reconcile count, errors and duration per kind on /metrics.
func TestReconcileMetrics(t *testing.T) {
	ns := namespace(t, "metrics")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, rootShardManifest("root", "kcp.example.com", 6443)))
	waitFor(t, ns, "rootshard/root", "CertificatesReady")

	metrics, err := stack.ServerGet(t.Context(), "/metrics")
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`kcp_setups_reconciles_total\{kind="rootshard",result="success"\} [1-9]`), metrics)
	assert.Regexp(t, regexp.MustCompile(`kcp_setups_reconcile_duration_seconds_count\{kind="rootshard"\} [1-9]`), metrics)
}
