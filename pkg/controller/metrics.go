package controller

import (
	"time"

	"k8s.io/component-base/metrics"

	"github.com/kcp-setups/apiserver/pkg/controller/metric"
)

// metricsOfKinds are the metrics of every kind's controller (and objectmetrics.go).
var metricsOfKinds metric.Set

var (
	reconciles        = metricsOfKinds.Counter("reconciles_total", "Reconciles of a kind's objects, by result.", "kind", "result")
	reconcileDuration = metricsOfKinds.Histogram("reconcile_duration_seconds", "How long a reconcile of a kind's object took.",
		metrics.ExponentialBuckets(0.001, 2, 15), "kind")
)

// observe records one reconcile of kind that started at start and ended with err.
func observe(kind string, start time.Time, err error) {
	metricsOfKinds.Register()
	reconciles.WithLabelValues(kind, reconcileResult(err)).Inc()
	reconcileDuration.WithLabelValues(kind).Observe(time.Since(start).Seconds())
}

// reconcileResult is how a reconcile that ended with err is counted and logged.
func reconcileResult(err error) string {
	if err != nil {
		return "error"
	}
	return "success"
}
