package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// resultsFile is where every benchmark records its figures; the Makefile sets BENCH_OUTPUT.
func resultsDir() string {
	if dir := os.Getenv("BENCH_OUTPUT"); dir != "" {
		return dir
	}
	return filepath.Join("..", "..", "_output", "bench")
}

// Figure is one number of a benchmark.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// Machine says where and on what a run was measured.
type Machine struct {
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"goVersion"`
	Commit    string `json:"commit"`
	Dirty     bool   `json:"dirty,omitempty"`
}

// Entry is one benchmark's figures from one run.
type Entry struct {
	Benchmark string    `json:"benchmark"`
	Time      time.Time `json:"time"`
	Machine   Machine   `json:"machine"`
	Figures   []Figure  `json:"figures"`
	// Ratios are the one-line comparisons with the anchors, as printed.
	Ratios []string `json:"ratios"`
	// Timelines are where the time of each ready measurement went.
	Timelines map[string][]Milestone `json:"timelines,omitempty"`
}

// Results is results.json: the latest entry of each benchmark, and every run before, so that
// two runs can be compared.
type Results struct {
	Latest map[string]Entry `json:"latest"`
	Runs   []Entry          `json:"runs"`
}

// entry collects the figures of one benchmark while it runs.
type entry struct{ Entry }

func newEntry(benchmark string) *entry {
	return &entry{Entry{Benchmark: benchmark, Time: time.Now().UTC(), Machine: machine()}}
}

// add records a figure and reports it as a metric of b, in benchstat's format.
func (e *entry) add(b *testing.B, name string, value float64, unit string) {
	e.Figures = append(e.Figures, Figure{Name: name, Value: value, Unit: unit})
	if b != nil {
		b.ReportMetric(value, unit)
	}
}

// ratio prints and records a comparison with an anchor.
func (e *entry) ratio(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	fmt.Printf("%s: %s\n", e.Benchmark, line)
	e.Ratios = append(e.Ratios, line)
}

// figure is the value of a recorded figure, or false.
func (e *Entry) figure(name, unit string) (float64, bool) {
	for _, f := range e.Figures {
		if f.Name == name && f.Unit == unit {
			return f.Value, true
		}
	}
	return 0, false
}

// save merges the entry into results.json and prints how it compares with the previous run.
func (e *entry) save(b *testing.B) {
	path := filepath.Join(resultsDir(), "results.json")
	var all Results
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		b.Errorf("reading %s: %v", path, err)
		return
	default:
		if err := json.Unmarshal(data, &all); err != nil {
			b.Errorf("reading %s: %v", path, err)
			return
		}
	}
	if all.Latest == nil {
		all.Latest = map[string]Entry{}
	}
	if previous, ok := all.Latest[e.Benchmark]; ok {
		e.compare(&previous)
	}
	all.Latest[e.Benchmark] = e.Entry
	all.Runs = append(all.Runs, e.Entry)
	data, err = json.MarshalIndent(all, "", "  ")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		err = os.WriteFile(path, append(data, '\n'), 0o644)
	}
	if err != nil {
		b.Errorf("writing %s: %v", path, err)
		return
	}
	fmt.Printf("%s: recorded in %s\n", e.Benchmark, path)
}

// compare prints each figure next to the same figure of a previous run.
func (e *entry) compare(previous *Entry) {
	fmt.Printf("%s: against the previous run (%s, commit %.12s, %d CPUs):\n", e.Benchmark,
		previous.Time.Format(time.RFC3339), previous.Machine.Commit, previous.Machine.CPUs)
	for _, f := range e.Figures {
		old, ok := previous.figure(f.Name, f.Unit)
		if !ok || old == 0 {
			continue
		}
		fmt.Printf("  %-40s %10.4g → %10.4g %-8s (%+.0f%%)\n", f.Name, old, f.Value, f.Unit, 100*(f.Value-old)/old)
	}
}

// machine describes this machine and checkout.
func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
		m.Dirty = len(strings.TrimSpace(string(out))) > 0
	}
	return m
}
