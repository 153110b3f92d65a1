package controller

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/flowcontrol"
)

// The defaults of KcpHealth. 1000 setups polled every 30 s make about 33 checks a second,
// under the rate; an unreachable kcp holds one of the concurrent checks for at most
// KcpCheckTimeout.
const (
	// DefaultKcpHealthInterval is how often a kcp is asked again.
	DefaultKcpHealthInterval = 30 * time.Second
	// KcpCheckTimeout bounds one check: a kcp that does not answer in time is unreachable.
	KcpCheckTimeout = 5 * time.Second
	// kcpChecksPerSecond and kcpChecksBurst bound how often the server asks any kcp at all.
	kcpChecksPerSecond = 50
	kcpChecksBurst     = 50
	// kcpConcurrentChecks bounds how many checks run at the same time.
	kcpConcurrentChecks = 16
)

// KcpHealth polls the kcp servers of RootShards and Shards for the KcpReady condition, at
// a bounded rate shared by every controller: a check of a key runs at most once an
// interval, however often the key is reconciled, and all checks together at most
// kcpChecksPerSecond and kcpConcurrentChecks at a time. Checks run outside the workers, so
// that a kcp which does not answer never holds up a reconcile; the end of a check enqueues
// its key, whose reconcile then reads the result.
type KcpHealth struct {
	// Interval is how long a result stands before the kcp is asked again.
	Interval time.Duration
	// Timeout bounds one check.
	Timeout time.Duration

	limiter flowcontrol.RateLimiter
	slots   chan struct{}
	running sync.WaitGroup

	mu      sync.Mutex
	entries map[string]*kcpHealthEntry
	swept   time.Time
}

// kcpHealthEntry is the last result of one key's checks.
type kcpHealthEntry struct {
	result  *KcpResult
	due     time.Time
	checked time.Time
	running bool
}

// NewKcpHealth returns a poller that asks each kcp again after interval
// (DefaultKcpHealthInterval when zero). The manager sets one on Host.KcpHealth, from
// --kcp-health-interval.
func NewKcpHealth(interval time.Duration) *KcpHealth {
	if interval <= 0 {
		interval = DefaultKcpHealthInterval
	}
	return &KcpHealth{
		Interval: interval,
		Timeout:  KcpCheckTimeout,
		limiter:  flowcontrol.NewTokenBucketRateLimiter(kcpChecksPerSecond, kcpChecksBurst),
		slots:    make(chan struct{}, kcpConcurrentChecks),
		entries:  map[string]*kcpHealthEntry{},
	}
}

// Observe returns the last result of key's checks, nil before the first one ends, and how
// long until key should be reconciled again for its next check. When a check is due, it
// starts one in the background and returns 0: the check's end calls done, which enqueues
// the key. probe runs under a context bounded by Timeout; ctx ends it, and every check,
// when the controllers stop.
func (h *KcpHealth) Observe(ctx context.Context, key string, probe func(context.Context) KcpResult, done func()) (*KcpResult, time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	h.sweep(now)
	e := h.entries[key]
	if e == nil {
		e = &kcpHealthEntry{}
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
func (h *KcpHealth) check(ctx context.Context, e *kcpHealthEntry, probe func(context.Context) KcpResult, done func()) {
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
func (h *KcpHealth) Forget(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// A check that is running reports into the entry it has, which nobody reads any more.
	delete(h.entries, key)
}

// Wait waits for the checks that are running: for tests.
func (h *KcpHealth) Wait() { h.running.Wait() }

// sweep drops, at most once an interval, the entries not checked for several intervals:
// those of objects that are gone, whose keys nobody observes any more.
func (h *KcpHealth) sweep(now time.Time) {
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
