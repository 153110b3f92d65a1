package etcdrestore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kcp-setups/apiserver/pkg/etcdbackup"
)

// Checks runs the checks of restores' snapshots off the workers, one at a time per snapshot,
// and keeps their answers: a snapshot that passed is not read again, one that failed its hash
// check or is not there is asked again after Recheck (the store may be mended), and a store
// that did not answer after Retry.
type Checks struct {
	// Recheck and Retry are how long a failed answer stands; zero: 5 minutes and 10 seconds.
	Recheck, Retry time.Duration
	// Timeout bounds one check; zero: 10 minutes (a check reads the whole snapshot).
	Timeout time.Duration
	// Now is the clock; nil: time.Now.
	Now func() time.Time

	mu      sync.Mutex
	answers map[string]answer
}

type answer struct {
	done bool
	err  error
	at   time.Time
}

// Verify is a check of a snapshot: nil when it passes etcd's hash check in its store.
type Verify func(ctx context.Context) error

// Check answers the check of key (the owner, the store and the snapshot) as it stands, and
// starts verify when none runs and the last answer no longer stands; done is called when it
// answers.
func (c *Checks) Check(key string, verify Verify, done func()) Check {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answers == nil {
		c.answers = map[string]answer{}
	}
	a, seen := c.answers[key]
	if seen && (!a.done || !c.expired(a)) {
		return Check{Done: a.done, Err: a.err}
	}
	c.answers[key] = answer{}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), orDefault(c.Timeout, 10*time.Minute))
		defer cancel()
		err := verify(ctx)
		c.mu.Lock()
		c.answers[key] = answer{done: true, err: err, at: c.now()}
		c.mu.Unlock()
		if done != nil {
			done()
		}
	}()
	if seen {
		// The last answer stands until the new one comes.
		return Check{Done: a.done, Err: a.err}
	}
	return Check{}
}

// Peek answers the check of key as it stands, and starts none.
func (c *Checks) Peek(key string) Check {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.answers[key]
	return Check{Done: a.done, Err: a.err}
}

// Forget drops the answers of key, once the restore no longer needs them.
func (c *Checks) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.answers[key]; ok && a.done {
		delete(c.answers, key)
	}
}

func (c *Checks) expired(a answer) bool {
	switch {
	case a.err == nil:
		return false
	case errors.Is(a.err, etcdbackup.ErrCorrupt) || errors.Is(a.err, etcdbackup.ErrNotFound):
		return c.now().Sub(a.at) >= orDefault(c.Recheck, 5*time.Minute)
	default:
		return c.now().Sub(a.at) >= orDefault(c.Retry, 10*time.Second)
	}
}

// RequeueAfter is when the answer of key no longer stands, for the owner's requeue: zero
// while a check runs or after a pass.
func (c *Checks) RequeueAfter(key string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.answers[key]
	if !ok || !a.done || a.err == nil {
		return 0
	}
	wait := orDefault(c.Retry, 10*time.Second)
	if errors.Is(a.err, etcdbackup.ErrCorrupt) || errors.Is(a.err, etcdbackup.ErrNotFound) {
		wait = orDefault(c.Recheck, 5*time.Minute)
	}
	if d := wait - c.now().Sub(a.at); d > 0 {
		return d
	}
	return time.Millisecond
}

// RetryAfter is how long an answer of a store that could not be asked stands: when a
// restore whose source cannot serve yet is looked at again.
func (c *Checks) RetryAfter() time.Duration { return orDefault(c.Retry, 10*time.Second) }

func (c *Checks) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
