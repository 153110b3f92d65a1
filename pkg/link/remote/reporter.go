package remote

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/link"
)

// ReportEvery is how often a consumer whose state did not change is reported again, so that
// the home's lastSeen says the remote is there.
const ReportEvery = time.Minute

// Consumer is a linked consumer as the remote server observed it, to report over the link of
// its bootstrap Secret.
type Consumer struct {
	Key        link.ConsumerKey
	UID        string
	Generation int64
	// Bootstrap is the bootstrap Secret it names.
	Bootstrap types.NamespacedName
	State     link.ConsumerReport
}

// Reporter reports linked consumers to their homes: a consumer whose report changed at
// once, one that did not once a ReportEvery. A report that fails is tried again at the next
// call. Each carries a sequence from the remote's clock in nanoseconds, which grows across
// restarts (link.Event).
type Reporter struct {
	// Send posts ev over the link of the bootstrap Secret bootstrap (Client.Report of the
	// Manager's Client).
	Send func(ctx context.Context, bootstrap types.NamespacedName, ev link.Event) error
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu   sync.Mutex
	last map[link.ConsumerKey]reported
	seq  int64
}

type reported struct {
	uid        string
	generation int64
	state      link.ConsumerReport
	at         time.Time
}

// Report sends what is due of consumers, and forgets the consumers not among them.
func (r *Reporter) Report(ctx context.Context, consumers []Consumer) {
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	r.mu.Lock()
	if r.last == nil {
		r.last = map[link.ConsumerKey]reported{}
	}
	seen := map[link.ConsumerKey]bool{}
	var due []Consumer
	for _, c := range consumers {
		seen[c.Key] = true
		prev, ok := r.last[c.Key]
		if ok && prev.uid == c.UID && prev.generation == c.Generation && prev.state.Equal(c.State) && now.Sub(prev.at) < ReportEvery {
			continue
		}
		due = append(due, c)
	}
	for k := range r.last {
		if !seen[k] {
			delete(r.last, k)
		}
	}
	r.mu.Unlock()

	for _, c := range due {
		ev := link.Event{ConsumerKey: c.Key, UID: c.UID, Generation: c.Generation, Sequence: r.next(now), State: c.State}
		if err := r.Send(ctx, c.Bootstrap, ev); err != nil {
			klog.FromContext(ctx).V(2).Info("Reporting a linked consumer failed; it is reported again later", "consumer", c.Key, "err", err)
			continue
		}
		r.mu.Lock()
		r.last[c.Key] = reported{uid: c.UID, generation: c.Generation, state: c.State, at: now}
		r.mu.Unlock()
	}
}

// next is a sequence above every one before: the clock in nanoseconds, or one more than the
// last when the clock did not move on.
func (r *Reporter) next(now time.Time) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq = max(r.seq+1, now.UnixNano())
	return r.seq
}
