package hostcluster

import "github.com/kcp-setups/apiserver/pkg/controller/metric"

// hostMetrics are the metrics of the writes to the host cluster.
var hostMetrics metric.Set

var hostWrites = hostMetrics.Counter("host_writes_total",
	"Server-side applies to the host cluster, by object kind and result: success, or the failure's reason (Forbidden, TooManyRequests, ...).",
	"kind", "result")

// observeWrite records one apply of an object of kind to the host cluster that ended with
// err: a host that refuses writes shows as a rate of failures, bounded by the backoff.
func observeWrite(kind string, err error) {
	hostMetrics.Register()
	result := "success"
	if err != nil {
		result = FailureReason(err)
	}
	hostWrites.WithLabelValues(kind, result).Inc()
}
