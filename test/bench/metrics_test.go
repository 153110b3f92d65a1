package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// sample is one line of a Prometheus text exposition: a metric's name, labels and value.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// metrics are the samples of one scrape.
type metrics []sample

// parseMetrics reads the Prometheus text format that /metrics serves: comments are skipped,
// and each other line is a name, optional {labels} and a value (no timestamps).
func parseMetrics(text string) (metrics, error) {
	var out metrics
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("line %d %q: %w", n+1, line, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func parseSample(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return s, fmt.Errorf("no value")
	}
	rest := line[i:]
	s.name = line[:i]
	if strings.HasPrefix(rest, "{") {
		rest = rest[1:]
		for {
			rest = strings.TrimLeft(rest, " ,")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.Index(rest, `="`)
			if eq < 0 {
				return s, fmt.Errorf("a label without a quoted value")
			}
			key := rest[:eq]
			rest = rest[eq+2:]
			var value strings.Builder
			closed := false
			for i := 0; i < len(rest); i++ {
				switch c := rest[i]; {
				case c == '\\' && i+1 < len(rest):
					i++
					switch rest[i] {
					case 'n':
						value.WriteByte('\n')
					default:
						value.WriteByte(rest[i])
					}
				case c == '"':
					rest, closed = rest[i+1:], true
				default:
					value.WriteByte(c)
				}
				if closed {
					break
				}
			}
			if !closed {
				return s, fmt.Errorf("an unterminated label value")
			}
			s.labels[key] = value.String()
		}
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return s, fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, err
	}
	s.value = v
	return s, nil
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
