package framework

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
)

// window is the length of the prefix by which a key's needles are indexed: a key has a
// dozen needles and the stack holds hundreds of keys, so the text is walked once and each
// base64 run looked up, rather than searched once per needle.
const window = 32

// Scanner finds private keys in text: any PEM private key block, its base64 once and twice
// over, and every known key as PEM body, DER base64, or the base64 of either.
type Scanner struct {
	markers []needle
	byStart map[string][]needle
	keys    int
}

// NewScanner is a scanner for the markers of any private key and for the given keys, each a
// PEM block, or text holding such blocks (as a kubeconfig or a Secret's data), or its base64.
func NewScanner(keys ...[]byte) *Scanner {
	set := newKeySet()
	for i, k := range keys {
		set.harvest(fmt.Sprintf("key #%d", i+1), k)
	}
	return newScanner(set)
}

func newScanner(set *keySet) *Scanner {
	s := &Scanner{markers: markerNeedles(), byStart: map[string][]needle{}}
	for _, key := range set.list() {
		s.keys++
		for _, n := range keyNeedles(key) {
			s.byStart[n.text[:window]] = append(s.byStart[n.text[:window]], n)
		}
	}
	return s
}

// Keys is how many distinct keys the scanner knows.
func (s *Scanner) Keys() int { return s.keys }

// Hit is one needle found, at a byte offset.
type Hit struct {
	Offset int
	What   string
}

// Scan returns what it finds in data, in the order of the text, at most one hit per needle
// meaning and line.
func (s *Scanner) Scan(data []byte) []Hit {
	var hits []Hit
	for _, m := range s.markers {
		for off := 0; ; {
			i := bytes.Index(data[off:], []byte(m.text))
			if i < 0 {
				break
			}
			hits = append(hits, Hit{Offset: off + i, What: m.what})
			off += i + len(m.text)
		}
	}
	for _, run := range base64Runs(data, window) {
		base := cap(data) - cap(run) // the run's offset in data
		for i := 0; i+window <= len(run); i++ {
			for _, n := range s.byStart[string(run[i:i+window])] {
				if bytes.HasPrefix(run[i:], []byte(n.text)) {
					hits = append(hits, Hit{Offset: base + i, What: n.what})
				}
			}
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Offset < hits[j].Offset })
	return hits
}

// Finding is a key found in a place, described without the key.
type Finding struct {
	// Place is where: a file and line, an object, a recorded response.
	Place string
	// What is which needle matched: a marker, or which held key.
	What string
}

// Place is one kind of place scanned and how much of it.
type Place struct {
	Name string
	// Items is how many items (files, objects, responses) were scanned.
	Items int
	// Bytes is how much text they held.
	Bytes int64
	// Note says what was left out and why.
	Note string
}

// Report is where a scan looked and what it found.
type Report struct {
	Keys     int
	Places   []Place
	Findings []Finding
}

// Write prints the report: each place with its count, then each finding with its place.
func (r *Report) Write(w io.Writer) {
	_, _ = fmt.Fprintf(w, "leak scan: looked for PRIVATE KEY blocks (and their base64) and for %d keys the stack held\n", r.Keys)
	for _, p := range r.Places {
		line := fmt.Sprintf("  %s: %d, %s", p.Name, p.Items, humanBytes(p.Bytes))
		if p.Note != "" {
			line += " (" + p.Note + ")"
		}
		_, _ = fmt.Fprintln(w, line)
	}
	_, _ = fmt.Fprintf(w, "leak scan: %d findings\n", len(r.Findings))
	for _, f := range r.Findings {
		_, _ = fmt.Fprintf(w, "  %s: %s\n", f.Place, f.What)
	}
}

// scanLines scans data and reports each hit at its line, named by place(line number, line).
func (s *Scanner) scanLines(data []byte, place func(n int, line []byte) string) []Finding {
	var out []Finding
	seen := map[string]bool{}
	for _, h := range s.Scan(data) {
		start := bytes.LastIndexByte(data[:h.Offset], '\n') + 1
		end := bytes.IndexByte(data[h.Offset:], '\n')
		if end < 0 {
			end = len(data) - h.Offset
		}
		n := bytes.Count(data[:start], []byte{'\n'}) + 1
		f := Finding{Place: place(n, data[start:h.Offset+end]), What: h.What}
		if key := f.Place + "\x00" + f.What; !seen[key] {
			seen[key] = true
			out = append(out, f)
		}
	}
	return out
}

func humanBytes(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 10<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// firstField is the part of a recorded line before its first tab: the object it describes.
func firstField(line []byte) string {
	s, _, _ := strings.Cut(string(line), "\t")
	return s
}
