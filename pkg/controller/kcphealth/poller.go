// Package kcphealth asks the kcp servers and managed etcds the setups run whether they
// serve: kcp's /readyz, its Shard objects, etcd's /health, polled at a bounded rate apart
// from the reconciles (Poller). The results make the KcpReady, Deregistered and EtcdReady
// conditions.
package kcphealth

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/flowcontrol"
)

// The defaults of Poller. 1000 setups polled every 30 s make about 33 checks a second,
// under the rate; an unreachable kcp holds one of the concurrent checks for at most
// CheckTimeout.
const (
	// DefaultInterval is how often a kcp is asked again.
	DefaultInterval = 30 * time.Second
	// CheckTimeout bounds one check: a kcp that does not answer in time is unreachable.
	CheckTimeout = 5 * time.Second
	// kcpChecksPerSecond and kcpChecksBurst bound how often the server asks any kcp at all.
	kcpChecksPerSecond = 50
	kcpChecksBurst     = 50
	// kcpConcurrentChecks bounds how many checks run at the same time.
	kcpConcurrentChecks = 16
)

// Poller polls the kcp servers of RootShards and Shards for the KcpReady condition, at
// a bounded rate shared by every controller: a check of a key runs at most once an
// interval, however often the key is reconciled, and all checks together at most
// kcpChecksPerSecond and kcpConcurrentChecks at a time. Checks run outside the workers, so
// that a kcp which does not answer never holds up a reconcile; the end of a check enqueues
// its key, whose reconcile then reads the result.
type Poller struct {
	// Interval is how long a result stands before the kcp is asked again.
	Interval time.Duration
	// Timeout bounds one check.
	Timeout time.Duration

	limiter flowcontrol.RateLimiter
	slots   chan struct{}
	running sync.WaitGroup

	mu      sync.Mutex
	entries map[string]*entry
	swept   time.Time
}

// entry is the last result of one key's checks.
type entry struct {
	result  *Result
	due     time.Time
	checked time.Time
	running bool
}

// NewPoller returns a poller that asks each kcp again after interval
// (DefaultInterval when zero). The manager sets one on Host.Poller, from
// --kcp-health-interval.
func NewPoller(interval time.Duration) *Poller {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &Poller{
		Interval: interval,
		Timeout:  CheckTimeout,
		limiter:  flowcontrol.NewTokenBucketRateLimiter(kcpChecksPerSecond, kcpChecksBurst),
		slots:    make(chan struct{}, kcpConcurrentChecks),
		entries:  map[string]*entry{},
	}
}

// Observe returns the last result of key's checks, nil before the first one ends, and how
// long until key should be reconciled again for its next check. When a check is due, it
// starts one in the background and returns 0: the check's end calls done, which enqueues
// the key. probe runs under a context bounded by Timeout; ctx ends it, and every check,
// when the controllers stop.
func (h *Poller) Observe(ctx context.Context, key string, probe func(context.Context) Result, done func()) (*Result, time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	h.sweep(now)
	e := h.entries[key]
	if e == nil {
		e = &entry{}
		h.entries[key] = e
	}
	if e.running {
		return e.result, 0
	}
	if e.result != nil && now.Before(e.due) {
		return e.result, e.due.Sub(now)
	}
	e.running = true
	h.running.Add(1)
	go h.check(ctx, e, probe, done)
	return e.result, 0
}

// check runs probe for e within the global bounds, records its result and calls done.
func (h *Poller) check(ctx context.Context, e *entry, probe func(context.Context) Result, done func()) {
	defer h.running.Done()
	ran := false
	defer func() {
		if !ran { // the controllers stop: the next leader asks again
			h.mu.Lock()
			e.running = false
			h.mu.Unlock()
		}
	}()
	select {
	case h.slots <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-h.slots }()
	if err := h.limiter.Wait(ctx); err != nil {
		return
	}
	checkCtx, cancel := context.WithTimeout(ctx, h.Timeout)
	result := probe(checkCtx)
	cancel()
	if ctx.Err() != nil {
		return
	}
	ran = true
	now := time.Now()
	h.mu.Lock()
	// Jittered, so that setups created together are not asked together forever.
	e.result, e.checked, e.due, e.running = &result, now, now.Add(wait.Jitter(h.Interval, 0.1)), false
	h.mu.Unlock()
	done()
}

// Forget drops what is known of key: its next Observe checks at once. For a kcp not to be
// asked (its Deployment is not Available), whose next answer must be fresh.
func (h *Poller) Forget(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// A check that is running reports into the entry it has, which nobody reads any more.
	delete(h.entries, key)
}

// Wait waits for the checks that are running: for tests.
func (h *Poller) Wait() { h.running.Wait() }

// sweep drops, at most once an interval, the entries not checked for several intervals:
// those of objects that are gone, whose keys nobody observes any more.
func (h *Poller) sweep(now time.Time) {
	if now.Sub(h.swept) < h.Interval {
		return
	}
	h.swept = now
	for key, e := range h.entries {
		if !e.running && !e.checked.IsZero() && now.Sub(e.checked) > 4*h.Interval {
			delete(h.entries, key)
		}
	}
}
