package remote

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/pkg/link"
)

// streamRecorder is what a Stream handed on.
type streamRecorder struct {
	mu        sync.Mutex
	revisions []string
	states    []error
}

func (r *streamRecorder) got(b link.Bundles) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.revisions = append(r.revisions, b.Revision)
}

func (r *streamRecorder) state(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, err)
}

func (r *streamRecorder) snapshot() ([]string, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.revisions...), append([]error(nil), r.states...)
}

// counter counts the streams opened.
type counter struct {
	mu sync.Mutex
	n  int
}

// next counts one more and returns the count.
func (c *counter) next() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n
}

func (c *counter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// send writes one message of the stream and flushes it.
func send(w http.ResponseWriter, m link.StreamMessage) {
	_ = json.NewEncoder(w).Encode(m)
	w.(http.Flusher).Flush()
}

func bundles(revision string) link.StreamMessage {
	return link.StreamMessage{Type: link.BundlesMessage, Bundles: &link.Bundles{Revision: revision,
		References: map[link.ConsumerKind]map[string][]byte{link.Shard: {"root-shard-url": []byte("https://root")}}, LinkCA: []byte("ca")}}
}

// runStream runs c's stream until the test ends.
func runStream(t *testing.T, c *Client, r *streamRecorder) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Stream(ctx, r.got, r.state) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestStreamReconnectsWhenTheListenerEndsIt: a stream the listener ends is opened again,
// and each Bundles reaches the caller in order.
func TestStreamReconnectsWhenTheListenerEndsIt(t *testing.T) {
	var connections counter
	h := newHome(t, link.DefaultLimits, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := connections.next()
		if n == 1 {
			send(w, bundles("1"))
			return // the listener ends the stream
		}
		send(w, bundles("2"))
		<-r.Context().Done()
	}))
	r := &streamRecorder{}
	runStream(t, h.client(t), r)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		revisions, _ := r.snapshot()
		assert.Equal(c, []string{"1", "2"}, revisions)
	}, 5*time.Second, 10*time.Millisecond)
	_, states := r.snapshot()
	require.Len(t, states, 3)
	assert.NoError(t, states[0])
	assert.ErrorContains(t, states[1], "ended")
	assert.NoError(t, states[2])
}

// TestStreamSilenceIsADeadStream: a stream that says nothing for three heartbeats is
// dropped and opened again; heartbeats keep one open.
func TestStreamSilenceIsADeadStream(t *testing.T) {
	var connections counter
	h := newHome(t, link.DefaultLimits, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := connections.next()
		send(w, bundles(map[int]string{1: "silent", 2: "beating"}[n]))
		if n == 1 {
			<-r.Context().Done()
			return
		}
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(30 * time.Millisecond):
				send(w, link.StreamMessage{Type: link.HeartbeatMessage})
			}
		}
	}))
	c := h.client(t)
	c.Heartbeat = 300 * time.Millisecond
	r := &streamRecorder{}
	runStream(t, c, r)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		revisions, _ := r.snapshot()
		assert.Equal(c, []string{"silent", "beating"}, revisions)
	}, 5*time.Second, 10*time.Millisecond)
	// Over six heartbeat intervals of heartbeats every tenth of one: the second stream stays.
	time.Sleep(2 * time.Second)
	assert.Equal(t, 2, connections.count())
	_, states := r.snapshot()
	require.Len(t, states, 3)
	assert.True(t, errors.Is(states[1], errSilent), "%v", states[1])
}

// TestStreamWaitsOnRefusal: a refused stream (403: the Link is being deleted) is asked again
// only after the backoff, and says why.
func TestStreamWaitsOnRefusal(t *testing.T) {
	h := newHome(t, link.DefaultLimits, http.NotFoundHandler())
	h.deleting.Store(true)
	c := h.client(t)
	c.Backoff.Duration = 100 * time.Millisecond
	r := &streamRecorder{}
	runStream(t, c, r)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, states := r.snapshot()
		assert.NotEmpty(c, states)
	}, 5*time.Second, 10*time.Millisecond)
	_, first := r.snapshot()
	time.Sleep(350 * time.Millisecond)
	revisions, states := r.snapshot()
	assert.Empty(t, revisions)
	assert.LessOrEqual(t, len(states)-len(first), 4, "one attempt per backoff step, not a tight loop")
	assert.True(t, IsForbidden(states[0]), "%v", states[0])
}
