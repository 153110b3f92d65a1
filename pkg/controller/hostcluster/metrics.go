package hostcluster

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

var (
	hostWrites = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "kcp_setups", Name: "host_writes_total",
		Help:           "Server-side applies to the host cluster, by object kind and result: success, or the failure's reason (Forbidden, TooManyRequests, ...).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"kind", "result"})
	registerMetrics sync.Once
)

// observeWrite records one apply of an object of kind to the host cluster that ended with
// err: a host that refuses writes shows as a rate of failures, bounded by the backoff.
func observeWrite(kind string, err error) {
	registerMetrics.Do(func() { legacyregistry.MustRegister(hostWrites) })
	result := "success"
	if err != nil {
		result = FailureReason(err)
	}
	hostWrites.WithLabelValues(kind, result).Inc()
}
