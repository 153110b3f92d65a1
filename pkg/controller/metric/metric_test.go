package metric

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
)

// A Set's metrics are exported under Namespace with their help and labels, ALPHA, once
// Register ran, however often it runs.
func TestSetRegistersItsMetricsOnce(t *testing.T) {
	var s Set
	counter := s.Counter("test_things_total", "Things, by result.", "result")
	gauge := s.Gauge("test_level", "A level.", "kind")
	histogram := s.Histogram("test_seconds", "How long.", []float64{1}, "kind")
	s.Register()
	s.Register()
	counter.WithLabelValues("success").Inc()
	gauge.WithLabelValues("a").Set(2)
	histogram.WithLabelValues("a").Observe(0.5)
	require.NoError(t, testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(`
# HELP kcp_setups_test_things_total [ALPHA] Things, by result.
# TYPE kcp_setups_test_things_total counter
kcp_setups_test_things_total{result="success"} 1
# HELP kcp_setups_test_level [ALPHA] A level.
# TYPE kcp_setups_test_level gauge
kcp_setups_test_level{kind="a"} 2
# HELP kcp_setups_test_seconds [ALPHA] How long.
# TYPE kcp_setups_test_seconds histogram
kcp_setups_test_seconds_bucket{kind="a",le="1"} 1
kcp_setups_test_seconds_bucket{kind="a",le="+Inf"} 1
kcp_setups_test_seconds_sum{kind="a"} 0.5
kcp_setups_test_seconds_count{kind="a"} 1
`), "kcp_setups_test_things_total", "kcp_setups_test_level", "kcp_setups_test_seconds"))
}
