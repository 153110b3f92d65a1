package controller

import (
	"time"

	"k8s.io/client-go/util/workqueue"
)

// MaxBackoff caps how long a key that keeps failing waits before its next try. Nothing tells
// the controllers that a host cluster which refused writes (an RBAC rule taken away, an
// overloaded kube-apiserver) takes them again, so the retry itself must notice: with
// client-go's cap of 1000 s a setup could sit unrealized for a quarter of an hour after the
// host healed.
const MaxBackoff = 5 * time.Minute

// cappedRateLimiter is a rate limiter whose delays never exceed max.
type cappedRateLimiter struct {
	workqueue.TypedRateLimiter[string]
	max time.Duration
}

// When is the delay of the limiter under it, at most max.
func (r cappedRateLimiter) When(key string) time.Duration {
	return min(r.TypedRateLimiter.When(key), r.max)
}

// newRateLimiter is client-go's controller rate limiter (per-key exponential backoff from
// 5 ms, and 10 retries a second overall) with its per-key delay capped at MaxBackoff.
func newRateLimiter() workqueue.TypedRateLimiter[string] {
	return cappedRateLimiter{TypedRateLimiter: workqueue.DefaultTypedControllerRateLimiter[string](), max: MaxBackoff}
}
