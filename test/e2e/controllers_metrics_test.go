package e2e

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReconcileMetrics checks the reconcile count, errors and duration per kind on /metrics.
// The counters are the whole server's, which every test's objects share: so the test checks
// that they counted at least its own RootShard's reconciles, which the server's log names.
func TestReconcileMetrics(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "metrics")
	counted := func() (reconciles, durations float64) {
		metrics, err := stack.ServerGet(t.Context(), "/metrics")
		require.NoError(t, err)
		return series(t, metrics, `kcp_setups_reconciles_total{kind="rootshard",result="success"}`),
			series(t, metrics, `kcp_setups_reconcile_duration_seconds_count{kind="rootshard"}`)
	}
	reconcilesBefore, durationsBefore := counted()
	givenRootShard(t, ns, until("CertificatesReady"))

	own := ownReconciles(t, ns)["rootshard/root/success"]
	require.Positive(t, own, "the server's log names the RootShard's reconciles")
	reconcilesAfter, durationsAfter := counted()
	assert.GreaterOrEqual(t, reconcilesAfter-reconcilesBefore, float64(own), "kcp_setups_reconciles_total counts them")
	assert.GreaterOrEqual(t, durationsAfter-durationsBefore, float64(own), "kcp_setups_reconcile_duration_seconds observes them")
}

// series is the value of the series name{labels} in metrics, 0 when it is not there yet.
func series(t *testing.T, metrics, nameAndLabels string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(nameAndLabels) + ` (\S+)$`).FindStringSubmatch(metrics)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return v
}
