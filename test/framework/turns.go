package framework

import (
	"slices"
	"sync"
	"time"
)

// Turns schedules an end-to-end suite's parallel tests instead of go test's own -parallel
// limit, for two reasons: the longest tests start first (longest first is the classic way to
// finish a batch of jobs on a few workers early), and a test that waits for the self-service
// roles waits for them without holding a turn meanwhile. A suite runs go test with a
// -parallel above its number of tests, and gives each parallel test a turn with Take.

// Need is what a parallel test shares with others beyond its own namespace.
type Need int

const (
	// Alone: nothing but the stack.
	Alone Need = iota
	// SharedRoles: the install's self-service roles (roles.yaml), which the test binds users
	// to, kept in place while it runs.
	SharedRoles
	// OwnRoles: the self-service roles are the test's alone while it runs (a Helm release
	// that owns them, and takes them away before and after).
	OwnRoles
)

// NewTurns hands out n turns at once. The tests named in longestFirst start first, in that
// order, before every other; the first turn is given settle after the first Take, so that the
// tests go test releases all at once are all waiting by then.
func NewTurns(n int, longestFirst []string, settle time.Duration) *Turns {
	return &Turns{free: n, longestFirst: longestFirst, settle: settle}
}

// rank orders a test among the waiting: its place in longestFirst, or after all of them.
func (s *Turns) rank(name string) int {
	if i := slices.Index(s.longestFirst, name); i >= 0 {
		return i
	}
	return len(s.longestFirst)
}

// waiter is a test waiting for its turn.
type waiter struct {
	rank  int
	need  Need
	ready chan struct{}
}

// Turns hands out turns: at most free tests run at once; the waiting test of the lowest
// rank whose need fits goes next; a test that owns the roles runs with no test that shares
// them, and none that shares them starts while one that owns them waits before it.
type Turns struct {
	longestFirst []string
	settle       time.Duration
	mu           sync.Mutex
	free         int
	open         bool
	timer        *time.Timer
	waiting      []*waiter
	sharing      int
	owning       int
}

// Take blocks until the test name has its turn.
func (s *Turns) Take(name string, n Need) {
	w := &waiter{rank: s.rank(name), need: n, ready: make(chan struct{})}
	s.mu.Lock()
	// Stable: among equal ranks, the first to come goes first.
	i, _ := slices.BinarySearchFunc(s.waiting, w.rank, func(x *waiter, r int) int {
		if x.rank <= r {
			return -1
		}
		return 1
	})
	s.waiting = slices.Insert(s.waiting, i, w)
	if !s.open && s.timer == nil {
		s.timer = time.AfterFunc(s.settle, s.start)
	}
	s.next()
	s.mu.Unlock()
	<-w.ready
}

// start gives the first turns.
func (s *Turns) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open = true
	s.next()
}

// Give ends a turn taken with n.
func (s *Turns) Give(n Need) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free++
	switch n {
	case SharedRoles:
		s.sharing--
	case OwnRoles:
		s.owning--
	}
	s.next()
}

// next starts waiting tests while there are free turns and a waiting test fits.
func (s *Turns) next() {
	for s.open && s.free > 0 {
		i := s.fitting()
		if i < 0 {
			return
		}
		w := s.waiting[i]
		s.waiting = slices.Delete(s.waiting, i, i+1)
		s.free--
		switch w.need {
		case SharedRoles:
			s.sharing++
		case OwnRoles:
			s.owning++
		}
		close(w.ready)
	}
}

// fitting is the index of the first waiting test that may start now, or -1.
func (s *Turns) fitting() int {
	ownerWaits := false
	for i, w := range s.waiting {
		switch w.need {
		case Alone:
			return i
		case SharedRoles:
			if s.owning == 0 && !ownerWaits {
				return i
			}
		case OwnRoles:
			if s.owning == 0 && s.sharing == 0 {
				return i
			}
			ownerWaits = true
		}
	}
	return -1
}
