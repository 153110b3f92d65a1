package manager

import "sync"

// term is one leadership term's run of the controllers. The elector starts the controllers
// in a goroutine of their own and returns as soon as the lease is lost, while they may still
// be finishing a reconcile: the next campaign waits for them, so that two sets of workers
// never write to the host cluster at once.
type term struct {
	mu      sync.Mutex
	started bool
	err     error
	done    chan struct{}
}

func newTerm() *term { return &term{done: make(chan struct{})} }

// begin marks the controllers as started.
func (t *term) begin() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.started = true
}

// fail records that the controllers failed, which ends the term early.
func (t *term) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.err = err
}

// failure is the error the controllers failed with, if they did.
func (t *term) failure() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// end marks them as stopped.
func (t *term) end() { close(t.done) }

// wait returns once the controllers stopped, or at once when they never started. A term
// that begins after its wait has a cancelled context already: its controllers stop before
// their caches sync, so before any worker starts.
func (t *term) wait() {
	t.mu.Lock()
	started := t.started
	t.mu.Unlock()
	if started {
		<-t.done
	}
}
