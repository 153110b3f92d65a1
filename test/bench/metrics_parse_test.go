package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMetrics(t *testing.T) {
	m, err := parseMetrics(`# HELP apiserver_request_total Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",resource="secrets",subresource="",verb="APPLY"} 3
apiserver_request_total{code="200",resource="secrets",subresource="status",verb="APPLY"} 5
apiserver_request_total{code="200",resource="configmaps",subresource="",verb="GET"} 7
apiserver_request_total{code="200",resource="configmaps",subresource="",verb="DELETE"} 2
apiserver_request_total{code="200",resource="leases",subresource="",verb="PUT"} 11
# TYPE workqueue_depth gauge
workqueue_depth{name="Root\"Shard, a"} 4
# TYPE kcp_setups_reconcile_duration_seconds histogram
kcp_setups_reconcile_duration_seconds_bucket{kind="rootshard",le="0.001"} 1
kcp_setups_reconcile_duration_seconds_bucket{kind="rootshard",le="+Inf"} 3
kcp_setups_reconcile_duration_seconds_sum{kind="rootshard"} 0.75
kcp_setups_reconcile_duration_seconds_count{kind="rootshard"} 3
process_resident_memory_bytes 1.2e+07
`)
	require.NoError(t, err)
	assert.Equal(t, 5.0, hostWrites(m), "the APPLY of secrets and the DELETE of configmaps; not a status subresource, a GET, or a lease")
	assert.Equal(t, 4.0, m.sum("workqueue_depth", label("name", `Root"Shard, a`)), "an escaped quote and a comma in a label value")
	assert.Zero(t, m.sum("workqueue_depth", label("name", "rootshard")))
	assert.Equal(t, 1.2e7, m.sum("process_resident_memory_bytes", nil))
	assert.Equal(t, 250.0, ms(meanReconcile(nil, m)), "the mean RootShard reconcile, from the histogram's sum and count")

	for _, bad := range []string{`x{a="b} 1`, `x{a=b} 1`, "x 1e\n", "x{a=\"b\"}\n"} {
		_, err := parseMetrics(bad)
		assert.Error(t, err, bad)
	}
}
