package bench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// load is a number of concurrent clients calling an operation for a while.
type load struct {
	clients  int
	duration time.Duration
	// atStart, when set, is called as the measured duration d begins, after the clients
	// connected.
	atStart func(d time.Duration)
}

// outcome is what a load measured.
type outcome struct {
	elapsed   time.Duration
	latencies []time.Duration // sorted, of the calls that succeeded
	errors    int
	firstErr  error
	// cpu is the CPU each process of the stack, and the clients, spent per successful call,
	// in ms (cpuPerCall).
	cpu map[string]float64
}

// quick shortens every load and scale's steps tenfold (BENCH_QUICK=1), to check that the
// suite works rather than to measure.
var quick = os.Getenv("BENCH_QUICK") != ""

// run calls op from l.clients goroutines until l.duration has passed; op receives the index
// of its client, so that each can hold a connection of its own. Each client first calls op
// once, unmeasured, so that connecting is not part of the figures.
func (l load) run(ctx context.Context, op func(ctx context.Context, client int) error) outcome {
	if quick {
		l.duration /= 10
	}
	var (
		mu        sync.Mutex
		out       outcome
		wg        sync.WaitGroup
		connected sync.WaitGroup
		start     = make(chan time.Time)
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		out.errors++
		if out.firstErr == nil {
			out.firstErr = err
		}
	}
	connected.Add(l.clients)
	for c := range l.clients {
		wg.Go(func() {
			if err := op(ctx, c); err != nil {
				fail(err)
			}
			connected.Done()
			deadline := (<-start).Add(l.duration)
			var own []time.Duration
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t := time.Now()
				if err := op(ctx, c); err != nil {
					fail(err)
					continue
				}
				own = append(own, time.Since(t))
			}
			mu.Lock()
			defer mu.Unlock()
			out.latencies = append(out.latencies, own...)
		})
	}
	connected.Wait()
	if l.atStart != nil {
		l.atStart(l.duration)
	}
	cpuBefore := sampleCPU()
	begin := time.Now()
	for range l.clients {
		start <- begin
	}
	wg.Wait()
	out.elapsed = time.Since(begin)
	out.cpu = cpuPerCall(cpuBefore, sampleCPU(), len(out.latencies))
	slices.Sort(out.latencies)
	return out
}

// rate is the successful calls per second.
func (o outcome) rate() float64 { return float64(len(o.latencies)) / o.elapsed.Seconds() }

// percentile is the latency below which fraction p of the successful calls completed, in ms.
func (o outcome) percentile(p float64) float64 {
	if len(o.latencies) == 0 {
		return 0
	}
	return float64(o.latencies[int(p*float64(len(o.latencies)-1))].Microseconds()) / 1000
}

// report records the outcome's figures under name, prints them, and fails b if a call failed:
// errors are the one thing the suite asserts.
func (o outcome) report(b *testing.B, e *entry, name string) {
	e.add(b, name+"/rate", o.rate(), "ops/s")
	e.add(b, name+"/p50", o.percentile(0.50), "p50-ms")
	e.add(b, name+"/p99", o.percentile(0.99), "p99-ms")
	e.add(b, name+"/errors", float64(o.errors), "errors")
	// Into results.json only: testing.B keeps one metric per unit.
	for _, proc := range slices.Sorted(maps.Keys(o.cpu)) {
		e.add(nil, name+"/cpu/"+proc, o.cpu[proc], "cpu-ms/op")
	}
	fmt.Printf("%s: %-28s %6d calls in %5.1fs  %7.1f/s  p50 %6.1f ms  p99 %6.1f ms  errors %d\n", e.Benchmark, name,
		len(o.latencies), o.elapsed.Seconds(), o.rate(), o.percentile(0.50), o.percentile(0.99), o.errors)
	if len(o.cpu) > 0 { // measured by load.run only
		fmt.Printf("%s: %-28s CPU ms per call: %s\n", e.Benchmark, name, formatCPU(o.cpu))
	}
	if o.errors > 0 {
		b.Errorf("%s: %d calls failed, the first with: %v", name, o.errors, o.firstErr)
	}
}
