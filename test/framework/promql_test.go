package framework

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPromQLMetrics(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`kcp_setups_object_condition{condition="Available",status!="true"} == 1`, []string{"kcp_setups_object_condition"}},
		{`sum by (kind, result) (rate(kcp_setups_host_writes_total{result!="success"}[15m])) > 0`, []string{"kcp_setups_host_writes_total"}},
		{`max by (name) (aggregator_unavailable_apiservice{name="v1alpha1.operator.kcp.io"}) == 1`, []string{"aggregator_unavailable_apiservice"}},
		{`a / on(kind) group_left(phase) b offset 5m or vector(1)`, []string{"a", "b"}},
		{`histogram_quantile(0.99, sum without (le) (rate(x_bucket[5m:1m]))) > 2.5e3`, []string{"x_bucket"}},
		{`label_replace(y, "dst", "$1", "src", "(.*) or z")`, []string{"y"}},
		{`absent(kcp:recorded:rate5m) unless sum(z) BY (a) bool > 1`, []string{"kcp:recorded:rate5m", "z"}},
		{`{__name__="x"}`, nil},
	} {
		assert.Equal(t, tc.want, PromQLMetrics(tc.expr), tc.expr)
	}
}
