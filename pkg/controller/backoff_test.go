package controller

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBackoffDoublesUpToItsCap(t *testing.T) {
	r := newRateLimiter()
	var delays []time.Duration
	for range 40 {
		delays = append(delays, r.When("team-a/root"))
	}
	assert.Equal(t, []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond}, delays[:3], "exponential from 5 ms")
	for i := 1; i < len(delays); i++ {
		assert.GreaterOrEqual(t, delays[i], delays[i-1], "never shorter than the one before")
		assert.LessOrEqual(t, delays[i], MaxBackoff)
	}
	assert.Equal(t, MaxBackoff, delays[len(delays)-1], "a key that keeps failing is tried every MaxBackoff")
	assert.Equal(t, 40, r.NumRequeues("team-a/root"))

	r.Forget("team-a/root")
	assert.Equal(t, 5*time.Millisecond, r.When("team-a/root"), "a success starts over")
	assert.Equal(t, 5*time.Millisecond, r.When("team-b/root"), "keys back off apart")
}
