package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// load is a number of concurrent clients calling an operation for a while.
type load struct {
	clients  int
	duration time.Duration
}

// outcome is what a load measured.
type outcome struct {
	elapsed   time.Duration
	latencies []time.Duration // sorted, of the calls that succeeded
	errors    int
	firstErr  error
}

// run calls op from l.clients goroutines until l.duration has passed; op receives the index
// of its client, so that each can hold a connection of its own.
func (l load) run(ctx context.Context, op func(ctx context.Context, client int) error) outcome {
	var (
		mu  sync.Mutex
		out outcome
		wg  sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(l.duration)
	for c := range l.clients {
		wg.Go(func() {
			var own []time.Duration
			var errs int
			var first error
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t := time.Now()
				if err := op(ctx, c); err != nil {
					errs++
					if first == nil {
						first = err
					}
					continue
				}
				own = append(own, time.Since(t))
			}
			mu.Lock()
			defer mu.Unlock()
			out.latencies = append(out.latencies, own...)
			out.errors += errs
			if out.firstErr == nil {
				out.firstErr = first
			}
		})
	}
	wg.Wait()
	out.elapsed = time.Since(start)
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
	fmt.Printf("%s: %-28s %6d calls in %5.1fs  %7.1f/s  p50 %6.1f ms  p99 %6.1f ms  errors %d\n", e.Benchmark, name,
		len(o.latencies), o.elapsed.Seconds(), o.rate(), o.percentile(0.50), o.percentile(0.99), o.errors)
	if o.errors > 0 {
		b.Errorf("%s: %d calls failed, the first with: %v", name, o.errors, o.firstErr)
	}
}
