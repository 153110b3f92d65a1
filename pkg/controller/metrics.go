package controller

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

var (
	reconciles = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "kcp_setups", Name: "reconciles_total",
		Help:           "Reconciles of a kind's objects, by result.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"kind", "result"})
	reconcileDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace: "kcp_setups", Name: "reconcile_duration_seconds",
		Help:           "How long a reconcile of a kind's object took.",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	}, []string{"kind"})
	registerMetrics sync.Once
)

// register registers the controllers' metrics once.
func register() {
	registerMetrics.Do(func() {
		legacyregistry.MustRegister(reconciles, reconcileDuration, objectsByPhase, objectConditions)
	})
}

// observe records one reconcile of kind that started at start and ended with err.
func observe(kind string, start time.Time, err error) {
	register()
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
