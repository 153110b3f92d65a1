package bench

import (
	"slices"
	"strings"

	"k8s.io/component-base/metrics/testutil"
)

// sample is one line of a Prometheus text exposition: a metric's name, labels and value.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// metrics are the samples of one scrape.
type metrics []sample

// parseMetrics reads the Prometheus text format that /metrics serves, with component-base's
// parser; a histogram gives its _sum and _count.
func parseMetrics(text string) (metrics, error) {
	families, err := testutil.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	var out metrics
	for name, family := range families {
		for _, m := range family.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			add := func(name string, value float64) {
				out = append(out, sample{name: name, labels: labels, value: value})
			}
			switch {
			case m.Counter != nil:
				add(name, m.GetCounter().GetValue())
			case m.Gauge != nil:
				add(name, m.GetGauge().GetValue())
			case m.Untyped != nil:
				add(name, m.GetUntyped().GetValue())
			case m.Histogram != nil:
				add(name+"_sum", m.GetHistogram().GetSampleSum())
				add(name+"_count", float64(m.GetHistogram().GetSampleCount()))
			}
		}
	}
	return out, nil
}

// sum adds the values of the samples named name for which match (nil for all) holds.
func (m metrics) sum(name string, match func(labels map[string]string) bool) float64 {
	total := 0.0
	for _, s := range m {
		if s.name == name && (match == nil || match(s.labels)) {
			total += s.value
		}
	}
	return total
}

// label matches samples whose label key has one of values.
func label(key string, values ...string) func(map[string]string) bool {
	return func(l map[string]string) bool {
		v, ok := l[key]
		return ok && slices.Contains(values, v)
	}
}
