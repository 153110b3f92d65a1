package etcdrestore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/pkg/etcdbackup"
)

// TestChecksRunOnceAndKeepAnswers: a check runs off the caller, once while it runs; a pass
// stands for good, a corrupt snapshot until Recheck, an unreachable store until Retry.
func TestChecksRunOnceAndKeepAnswers(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	c := &Checks{Recheck: 5 * time.Minute, Retry: 10 * time.Second, Now: clock}

	var runs atomic.Int32
	release := make(chan struct{})
	answered := make(chan struct{}, 10)
	result := error(nil)
	verify := func(context.Context) error { runs.Add(1); <-release; return result }
	done := func() { answered <- struct{}{} }

	assert.Equal(t, Check{}, c.Check("k", verify, done), "not answered yet")
	assert.Equal(t, Check{}, c.Check("k", verify, done), "still running: no second run")
	close(release)
	<-answered
	assert.Equal(t, int32(1), runs.Load())
	assert.Equal(t, Check{Done: true}, c.Check("k", verify, done), "a pass stands")
	advance(time.Hour)
	assert.Equal(t, Check{Done: true}, c.Check("k", verify, done), "for good")
	assert.Equal(t, time.Duration(0), c.RequeueAfter("k"))
	assert.Equal(t, int32(1), runs.Load())

	corrupt := fmt.Errorf("snapshot s: %w", etcdbackup.ErrCorrupt)
	result = corrupt
	c.Check("corrupt", verify, done)
	<-answered
	got := c.Check("corrupt", verify, done)
	require.True(t, got.Done)
	assert.ErrorIs(t, got.Err, etcdbackup.ErrCorrupt)
	assert.Equal(t, 5*time.Minute, c.RequeueAfter("corrupt"))
	advance(time.Minute)
	c.Check("corrupt", verify, done)
	assert.Equal(t, int32(2), runs.Load(), "a corrupt answer stands until Recheck")
	advance(4 * time.Minute)
	got = c.Check("corrupt", verify, done)
	assert.ErrorIs(t, got.Err, etcdbackup.ErrCorrupt, "the last answer stands while the new check runs")
	<-answered
	assert.Equal(t, int32(3), runs.Load(), "asked again after Recheck")

	result = errors.New("connection refused")
	c.Check("down", verify, done)
	<-answered
	assert.Equal(t, 10*time.Second, c.RequeueAfter("down"))
	assert.Equal(t, c.Peek("down"), c.Check("down", verify, done))
	assert.Equal(t, int32(4), runs.Load(), "an unreachable store's answer stands until Retry")
	advance(10 * time.Second)
	c.Check("down", verify, done)
	<-answered
	assert.Equal(t, int32(5), runs.Load(), "asked again after Retry")

	c.Forget("down")
	assert.Equal(t, Check{}, c.Peek("down"), "forgotten")
}
