// Command bench-chart draws the chart of docs/performance.md from the latest
// entries of _output/bench/results.json (`make bench` runs it last): mints per second next to
// TokenRequest, and the time from apply to Running next to cert-manager issuing a chain of the
// same depth alone. It writes SVG by hand, so that it needs nothing but the standard library.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
)

func main() {
	in := flag.String("in", "_output/bench/results.json", "the results of `make bench`")
	out := flag.String("out", "_output/bench/chart.svg", "where to write the chart")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "bench-chart:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var r results
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("reading %s: %w", in, err)
	}
	svg, bars, err := draw(r)
	if err != nil {
		return err
	}
	if bars == 0 {
		fmt.Printf("bench-chart: %s holds none of the charted figures; no chart\n", in)
		return nil
	}
	if err := os.WriteFile(out, svg, 0o644); err != nil {
		return err
	}
	fmt.Printf("bench-chart: %d bars in %s\n", bars, out)
	return nil
}
