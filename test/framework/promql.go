package framework

import (
	"regexp"
	"slices"
	"sort"
	"strings"
)

var (
	// promqlStrings are string literals, whose content is never a metric.
	promqlStrings = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	// promqlMatchers and promqlRanges are label matchers and range or subquery durations.
	promqlMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promqlRanges   = regexp.MustCompile(`\[[^\]]*\]`)
	// promqlLabelLists are the label lists of by, without, on, ignoring, group_left and
	// group_right.
	promqlLabelLists = regexp.MustCompile(`(?i)\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	// promqlTokens are numbers (with a duration's unit) and identifiers, with what follows.
	promqlTokens = regexp.MustCompile(`[0-9][0-9a-zA-Z_.]*|([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?`)
)

// promqlKeywords are PromQL's words that are not metrics.
var promqlKeywords = []string{"and", "or", "unless", "by", "without", "on", "ignoring",
	"group_left", "group_right", "bool", "offset", "inf", "nan", "atan2", "start", "end"}

// PromQLMetrics returns the names of the metrics a PromQL expression selects, sorted and
// once each: every identifier that is not in a string, a label matcher or list, a duration,
// a function or aggregation (followed by a parenthesis) or a keyword.
func PromQLMetrics(expr string) []string {
	expr = promqlStrings.ReplaceAllString(expr, `""`)
	expr = promqlMatchers.ReplaceAllString(expr, " ")
	expr = promqlRanges.ReplaceAllString(expr, " ")
	expr = promqlLabelLists.ReplaceAllString(expr, " ")
	var names []string
	for _, m := range promqlTokens.FindAllStringSubmatch(expr, -1) {
		name, call := m[1], m[2]
		if name == "" || call != "" || slices.Contains(promqlKeywords, strings.ToLower(name)) || slices.Contains(names, name) {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
