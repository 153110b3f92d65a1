package kcphealth

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var ready = Result{Status: metav1.ConditionTrue, Reason: "Ready"}

// TestKcpHealthAsksOnceAnInterval: however often a key is observed, its kcp is asked once
// while a check runs and once an interval after; Forget asks again at once.
func TestKcpHealthAsksOnceAnInterval(t *testing.T) {
	h := NewPoller(time.Hour)
	var asked, done atomic.Int32
	probe := func(context.Context) Result { asked.Add(1); return ready }
	for range 5 {
		h.Observe(t.Context(), "a", probe, func() { done.Add(1) })
	}
	h.Wait()
	assert.EqualValues(t, 1, asked.Load())
	assert.EqualValues(t, 1, done.Load(), "the end of the check enqueues the key once")

	got, after := h.Observe(t.Context(), "a", probe, func() { done.Add(1) })
	require.NotNil(t, got)
	assert.Equal(t, ready, *got)
	assert.Greater(t, after, 50*time.Minute, "the next check is an interval (jittered) away")
	assert.LessOrEqual(t, after, 66*time.Minute)
	h.Wait()
	assert.EqualValues(t, 1, asked.Load())

	h.Forget("a")
	got, after = h.Observe(t.Context(), "a", probe, func() {})
	assert.Nil(t, got, "nothing known after Forget")
	assert.Zero(t, after)
	h.Wait()
	assert.EqualValues(t, 2, asked.Load())
}

// TestKcpHealthBoundsConcurrentChecks: however many keys are due, at most
// kcpConcurrentChecks checks run at the same time, and none in a worker.
func TestKcpHealthBoundsConcurrentChecks(t *testing.T) {
	h := NewPoller(time.Hour)
	var running, most atomic.Int32
	release := make(chan struct{})
	probe := func(context.Context) Result {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		running.Add(-1)
		return ready
	}
	start := time.Now()
	for i := range 3 * kcpConcurrentChecks {
		h.Observe(t.Context(), fmt.Sprint(i), probe, func() {})
	}
	assert.Less(t, time.Since(start), time.Second, "Observe never waits for a check")
	assert.Eventually(t, func() bool { return running.Load() == kcpConcurrentChecks }, 5*time.Second, 10*time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	assert.EqualValues(t, kcpConcurrentChecks, most.Load())
	close(release)
	h.Wait()
	assert.EqualValues(t, kcpConcurrentChecks, most.Load())
}

// TestKcpHealthStopsWithItsContext: a check waiting for its turn ends with the controllers,
// without a result or an enqueue.
func TestKcpHealthStopsWithItsContext(t *testing.T) {
	h := NewPoller(time.Hour)
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	blocked := make(chan struct{})
	var holding atomic.Int32
	for i := range kcpConcurrentChecks {
		h.Observe(ctx, fmt.Sprint(i), func(ctx context.Context) Result { holding.Add(1); <-ctx.Done(); return ready }, func() {})
	}
	// Every slot is taken before the next check is asked for, so that it must wait.
	require.Eventually(t, func() bool { return holding.Load() == kcpConcurrentChecks }, 5*time.Second, time.Millisecond)
	enqueued := false
	h.Observe(ctx, "waiting", func(context.Context) Result { close(blocked); return ready }, func() { mu.Lock(); enqueued = true; mu.Unlock() })
	cancel()
	h.Wait()
	select {
	case <-blocked:
		t.Fatal("a check ran after its context ended")
	default:
	}
	mu.Lock()
	defer mu.Unlock()
	assert.False(t, enqueued)
}

func TestReadyzSummary(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"[+]ping ok\n[-]etcd failed: reason withheld\n[+]log ok\n[-]poststarthook/x failed: reason withheld\nreadyz check failed\n",
			"[-]etcd failed: reason withheld; [-]poststarthook/x failed: reason withheld"},
		{"one\n\ntwo\nthree\nfour\nfive\nsix\n", "one; two; three; four; five"},
		{"", "(no body)"},
	} {
		assert.Equal(t, tc.want, readyzSummary(strings.NewReader(tc.body)))
	}
}

func TestTruncateKeepsCharacters(t *testing.T) {
	msg := strings.Repeat("é", maxKcpMessage)
	got := truncate(msg)
	assert.LessOrEqual(t, len(got), maxKcpMessage)
	assert.True(t, strings.HasSuffix(got, "é..."), got[len(got)-8:])
	assert.Equal(t, "short", truncate("short"))
}
