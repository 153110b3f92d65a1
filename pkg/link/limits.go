package link

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits are what one declaration's remote may take of the listener, so that a slow or
// hostile remote cannot exhaust the home.
type Limits struct {
	// MaxStreams is how many bundle streams it may hold at once.
	MaxStreams int
	// MaxBodyBytes is the largest request body it may send.
	MaxBodyBytes int64
	// RequestsPerSecond and Burst are the rate of its requests, streams included.
	RequestsPerSecond float64
	Burst             int
}

// DefaultLimits are the listener's limits per declaration (docs/links.md): a
// remote holds one stream per server (two while one restarts), and a Shard asks about ten
// signatures when it is realized; a CSR is about a kilobyte, an event a few.
var DefaultLimits = Limits{MaxStreams: 4, MaxBodyBytes: 64 << 10, RequestsPerSecond: 10, Burst: 50}

// Limiter holds each declaration, by its UID, to the same Limits. Only authorized requests
// reach it, so it keeps state for declared Links alone; Forget drops a deleted one's.
type Limiter struct {
	limits Limits
	mu     sync.Mutex
	by     map[string]*declarationLimits
}

type declarationLimits struct {
	rate    *rate.Limiter
	streams int
}

// NewLimiter is a Limiter of limits.
func NewLimiter(limits Limits) *Limiter {
	return &Limiter{limits: limits, by: map[string]*declarationLimits{}}
}

// Limits are the limiter's limits.
func (l *Limiter) Limits() Limits { return l.limits }

// of is the state of the declaration uid; l.mu is held.
func (l *Limiter) of(uid string) *declarationLimits {
	d, ok := l.by[uid]
	if !ok {
		d = &declarationLimits{rate: rate.NewLimiter(rate.Limit(l.limits.RequestsPerSecond), l.limits.Burst)}
		l.by[uid] = d
	}
	return d
}

// Allow takes one request of the declaration uid at now from its rate; when there is none
// left, it takes nothing and says how long until there is.
func (l *Limiter) Allow(uid string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.of(uid).rate.ReserveN(now, 1)
	if !r.OK() {
		return time.Second, false
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

// OpenStream counts a stream of the declaration uid, unless it holds MaxStreams already; the
// stream's end calls release (once or more).
func (l *Limiter) OpenStream(uid string) (release func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.of(uid)
	if d.streams >= l.limits.MaxStreams {
		return nil, false
	}
	d.streams++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			d.streams--
		})
	}, true
}

// Forget drops the state of the declaration uid: its Link is gone.
func (l *Limiter) Forget(uid string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.by, uid)
}
