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
workqueue_depth{name="Root\"Shard, a"} 4
process_resident_memory_bytes 1.2e+07
`)
	require.NoError(t, err)
	assert.Len(t, m, 6)
	assert.Equal(t, 5.0, hostWrites(m), "APPLY of secrets and DELETE of configmaps, not the status subresource nor a GET")
	assert.Equal(t, 4.0, m.sum("workqueue_depth", label("name", `Root"Shard, a`)), "an escaped quote and a comma in a label value")
	assert.Equal(t, 1.2e7, m.sum("process_resident_memory_bytes", nil))
	assert.Zero(t, m.sum("workqueue_depth", label("name", "RootShard")))

	for _, bad := range []string{`x{a="b} 1`, `x{a=b} 1`, `x 1e`, `x{a="b"}`, `novalue`} {
		_, err := parseMetrics(bad)
		assert.Error(t, err, bad)
	}
}
