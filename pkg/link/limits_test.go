package link

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLimiterRate(t *testing.T) {
	l := NewLimiter(Limits{RequestsPerSecond: 2, Burst: 3, MaxStreams: 1})
	for i := range 3 {
		_, ok := l.Allow("a", now)
		require.True(t, ok, "request %d is within the burst", i)
	}
	wait, ok := l.Allow("a", now)
	assert.False(t, ok, "the burst is spent")
	assert.Equal(t, 500*time.Millisecond, wait, "one request more in half a second at 2 per second")
	_, ok = l.Allow("b", now)
	assert.True(t, ok, "each declaration has its own rate")
	wait, ok = l.Allow("a", now)
	assert.False(t, ok)
	assert.Equal(t, 500*time.Millisecond, wait, "a refused request takes nothing from the rate")
	_, ok = l.Allow("a", now.Add(500*time.Millisecond))
	assert.True(t, ok)
	_, ok = l.Allow("a", now.Add(500*time.Millisecond))
	assert.False(t, ok)
	_, ok = l.Allow("a", now.Add(10*time.Second))
	assert.True(t, ok, "the rate refills")
	l.Forget("a")
	for range 3 {
		_, ok = l.Allow("a", now.Add(10*time.Second))
		require.True(t, ok, "a forgotten declaration starts again with its burst")
	}
}

func TestLimiterStreams(t *testing.T) {
	l := NewLimiter(Limits{RequestsPerSecond: 1, Burst: 1, MaxStreams: 2})
	r1, ok := l.OpenStream("a")
	require.True(t, ok)
	_, ok = l.OpenStream("a")
	require.True(t, ok)
	_, ok = l.OpenStream("a")
	assert.False(t, ok, "two streams at most")
	_, ok = l.OpenStream("b")
	assert.True(t, ok, "each declaration has its own streams")
	r1()
	r1()
	_, ok = l.OpenStream("a")
	assert.True(t, ok, "a released stream makes room, once")
	_, ok = l.OpenStream("a")
	assert.False(t, ok, "a second release of the same stream frees nothing")
}
