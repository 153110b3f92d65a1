package preview

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Prefix starts every line of a preview, so that a client tells them from other warnings.
const Prefix = "preview: "

// The limits of a preview in the warnings of a response. The API server keeps at most 4096
// runes of warnings per response, and cuts each to 256 once over (k8s.io/apiserver's warning
// recorder): a full list is kept below that, with room for validation's warnings.
const (
	// SummaryLines is how many components a summary names before "… and N more".
	SummaryLines = 8
	// MaxLineRunes is the length a line is cut to.
	MaxLineRunes = 250
	// MaxFullRunes is how long a full list may be, all its lines together.
	MaxFullRunes = 3400
)

// NoChange is the line of a change that does nothing in the host cluster.
const NoChange = Prefix + "no change in the host cluster"

// NotAvailable is the line of a write the server cannot preview yet: its controllers'
// caches are not synced (a server starting, or one that does not lead).
const NotAvailable = Prefix + "not available yet: this server's controllers have not synced their caches"

// Component is a setup object and what changes in the host cluster for it.
type Component struct {
	// Kind and Name are the object's: RootShard, Shard, FrontProxy, CacheServer,
	// VirtualWorkspace.
	Kind, Name string
	Changes    []Change
	// Note, when set, is said instead of its changes: why it is not previewed.
	Note string
}

func (c Component) id() string { return c.Kind + "/" + c.Name }

// Summary is the short preview of a real write: Head's lines, then one line per component
// that changes, at most SummaryLines of them, then "… and N more (kubectl kcp-setups plan)"; a
// change that does nothing says NoChange.
func Summary(head []string, components []Component) []string {
	out := prefixed(head)
	var lines []string
	for _, c := range components {
		if l := summaryLine(c); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return append(out, NoChange)
	}
	if len(lines) > SummaryLines {
		more := len(lines) - SummaryLines
		lines = append(lines[:SummaryLines], fmt.Sprintf("%s… and %d more (kubectl kcp-setups plan)", Prefix, more))
	}
	return append(out, lines...)
}

// summaryLine is "Kind/name: what changes; ...", or "" when nothing does.
func summaryLine(c Component) string {
	if c.Note != "" {
		return cut(Prefix + c.id() + ": " + c.Note)
	}
	var parts []string
	issued, again := 0, 0
	for _, ch := range c.Changes {
		switch ch.Action {
		case IssuedAgain:
			again++
		case Issued:
			issued++
		default:
			parts = append(parts, objectLine(ch))
		}
	}
	if again > 0 {
		parts = append(parts, count(again, "Certificate")+" issued again")
	}
	if issued > 0 {
		parts = append(parts, count(issued, "Certificate")+" issued")
	}
	if len(parts) == 0 {
		return ""
	}
	return cut(Prefix + c.id() + ": " + strings.Join(parts, "; "))
}

// objectLine is "Deployment x rolls (why)".
func objectLine(ch Change) string {
	l := ch.Kind + " " + ch.Name + " " + ch.Action
	if ch.Why != "" {
		l += " (" + ch.Why + ")"
	}
	return l
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Full is the whole preview of a server dry run: head's lines, then for each component one
// line per object that changes, each followed by its details (a flag gained or lost by
// name, a volume, a template field), as "Kind/name: Deployment x: detail". It stops before
// MaxFullRunes with "… and N more lines (too many for the warnings of one response)".
func Full(head []string, components []Component) []string {
	var lines []string
	for _, c := range components {
		if c.Note != "" {
			lines = append(lines, Prefix+c.id()+": "+c.Note)
			continue
		}
		for _, ch := range c.Changes {
			lines = append(lines, Prefix+c.id()+": "+objectLine(ch))
			for _, d := range ch.Details {
				lines = append(lines, Prefix+c.id()+": "+ch.Kind+" "+ch.Name+": "+d)
			}
		}
	}
	if len(lines) == 0 {
		lines = []string{NoChange}
	}
	lines = append(prefixed(head), lines...)
	out, total := []string{}, 0
	for i, l := range lines {
		l = cut(l)
		n := utf8.RuneCountInString(l)
		if total+n > MaxFullRunes {
			return append(out, fmt.Sprintf("%s… and %d more lines (too many for the warnings of one response)", Prefix, len(lines)-i))
		}
		out, total = append(out, l), total+n
	}
	return out
}

func prefixed(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, cut(Prefix+l))
	}
	return out
}

// cut shortens a line to MaxLineRunes, with "…".
func cut(l string) string {
	if utf8.RuneCountInString(l) <= MaxLineRunes {
		return l
	}
	return string([]rune(l)[:MaxLineRunes-1]) + "…"
}
