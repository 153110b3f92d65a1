package etcdsnapshot

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup/agent"
)

const (
	// TakeTimeout bounds one snapshot, its write and verification in the store included.
	TakeTimeout = 30 * time.Minute
	// RetryAfter is how long a failed take (or a busy agent) waits before the next.
	RetryAfter = time.Minute
)

// Request is a snapshot to take.
type Request struct {
	// Name is an on-demand snapshot's name (status.etcd.pendingSnapshot); empty for a
	// scheduled one, which the agent names.
	Name string
	// Scheduled is the schedule time a scheduled snapshot is taken for.
	Scheduled time.Time
	// Agent reaches the backup agent, with kcp's etcd client certificate.
	Agent func() (*rest.Config, error)
	// Done is called when the take ended: the owner is reconciled again.
	Done func()
}

// Result is how the last take of an etcd ended.
type Result struct {
	Request
	// Taken is the snapshot taken; nil when the take failed.
	Taken *agent.Snapshot
	// Existed says the on-demand snapshot's name was in the store already: taken before.
	Existed bool
	// Listed is the store's list after the take; nil when it could not be read.
	Listed []agent.Snapshot
	Err    error
}

// Event is what the owner's reconcile tells in an Event.
type Event struct {
	Type, Reason, Message string
}

// Runner takes snapshots apart from the reconciles, at most one per etcd at a time, and keeps
// the last result of each for its owner's status.
type Runner struct {
	mu      sync.Mutex
	etcds   map[string]*etcdState
	running sync.WaitGroup
	now     func() time.Time
}

type etcdState struct {
	busy    bool
	retryAt time.Time
	last    *Result
	events  []Event
}

// NewRunner returns a Runner that knows no etcd.
func NewRunner() *Runner { return &Runner{etcds: map[string]*etcdState{}, now: time.Now} }

// Wait waits for the takes that run: for tests.
func (r *Runner) Wait() { r.running.Wait() }

// Start takes req's snapshot of the etcd of key under life in the background, unless one is
// being taken or the last failed less than RetryAfter ago; it reports whether it started.
func (r *Runner) Start(life context.Context, key string, req Request) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.etcds[key]
	if s == nil {
		s = &etcdState{}
		r.etcds[key] = s
	}
	if s.busy || r.now().Before(s.retryAt) {
		return false
	}
	s.busy = true
	r.running.Add(1)
	go r.take(life, s, req)
	return true
}

// Last is the last take's result of the etcd of key (false before one ended), and the Events
// that wait to be told, which it hands over.
func (r *Runner) Last(key string) (Result, []Event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.etcds[key]
	if s == nil || s.last == nil {
		return Result{}, nil, false
	}
	events := s.events
	s.events = nil
	return *s.last, events, true
}

// Forget drops what is known of the etcd of key: its backup is gone.
func (r *Runner) Forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.etcds[key]; s != nil && !s.busy {
		delete(r.etcds, key)
	}
}

func (r *Runner) take(life context.Context, s *etcdState, req Request) {
	defer r.running.Done()
	defer func() {
		if req.Done != nil {
			req.Done()
		}
	}()
	ctx, cancel := context.WithTimeout(life, TakeTimeout)
	defer cancel()
	res := Take(ctx, req)
	r.mu.Lock()
	defer r.mu.Unlock()
	s.busy = false
	if res.Err != nil {
		s.retryAt = r.now().Add(RetryAfter)
	}
	s.last = &res
	what, failed := "the scheduled snapshot", fmt.Sprintf("Taking the scheduled snapshot failed: %v", res.Err)
	if req.Name != "" {
		what, failed = "snapshot "+req.Name, fmt.Sprintf(operatorv1alpha1.SnapshotFailedMessage, req.Name, res.Err)
	}
	switch {
	case res.Taken != nil:
		s.events = append(s.events, Event{Type: corev1.EventTypeNormal, Reason: operatorv1alpha1.EventSnapshotTaken,
			Message: fmt.Sprintf("Took snapshot %s (revision %d, %d bytes)", res.Taken.Name, res.Taken.Revision, res.Taken.Size)})
	case errors.Is(res.Err, agent.ErrBusy):
		// Another take runs in the agent (another replica's, or one of before a restart):
		// later, without a warning.
	case res.Err != nil:
		s.events = append(s.events, Event{Type: corev1.EventTypeWarning, Reason: operatorv1alpha1.EventSnapshotFailed, Message: failed})
		klog.FromContext(life).Error(res.Err, "Taking a snapshot failed", "snapshot", what)
	}
}

// Take asks the backup agent req.Agent reaches for req's snapshot, then for the store's list.
// An on-demand name the store holds already counts as taken (Existed): the take ended before
// its status was written.
func Take(ctx context.Context, req Request) Result {
	res := Result{Request: req}
	cfg, err := req.Agent()
	if err != nil {
		res.Err = err
		return res
	}
	client, err := agent.ClientFor(cfg)
	if err != nil {
		res.Err = err
		return res
	}
	snap, err := client.Take(ctx, req.Name)
	switch {
	case err == nil:
		res.Taken = &snap
	case req.Name != "" && errors.Is(err, etcdbackup.ErrExists):
		res.Existed = true
	default:
		res.Err = err
		return res
	}
	if res.Listed, err = client.List(ctx); err != nil {
		// The snapshot is taken: the list comes with the next one.
		klog.FromContext(ctx).Error(err, "Listing the snapshots failed")
		res.Listed = nil
	}
	return res
}
