// Package metric declares the controllers' metrics alike: each is ALPHA, named in the
// kcp_setups namespace, and belongs to a Set, whose metrics are registered with the legacy
// registry together, once, before the first of them is recorded.
package metric

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Namespace is the prefix of every metric's name.
const Namespace = "kcp_setups"

// Set is metrics registered together. Its zero value is empty.
type Set struct {
	once sync.Once
	all  []metrics.Registerable
}

// Counter declares the counter Namespace_name of s, with help and labels.
func (s *Set) Counter(name, help string, labels ...string) *metrics.CounterVec {
	return add(s, metrics.NewCounterVec(&metrics.CounterOpts{Namespace: Namespace, Name: name, Help: help, StabilityLevel: metrics.ALPHA}, labels))
}

// Gauge declares the gauge Namespace_name of s, with help and labels.
func (s *Set) Gauge(name, help string, labels ...string) *metrics.GaugeVec {
	return add(s, metrics.NewGaugeVec(&metrics.GaugeOpts{Namespace: Namespace, Name: name, Help: help, StabilityLevel: metrics.ALPHA}, labels))
}

// Histogram declares the histogram Namespace_name of s, with help, buckets and labels.
func (s *Set) Histogram(name, help string, buckets []float64, labels ...string) *metrics.HistogramVec {
	return add(s, metrics.NewHistogramVec(&metrics.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets,
		StabilityLevel: metrics.ALPHA}, labels))
}

// Register registers the metrics of s with the legacy registry, the first time only.
func (s *Set) Register() {
	s.once.Do(func() { legacyregistry.MustRegister(s.all...) })
}

func add[M metrics.Registerable](s *Set, m M) M {
	s.all = append(s.all, m)
	return m
}
