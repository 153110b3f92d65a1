package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/kcp-setups/apiserver/pkg/link"
)

// maxStreamLine is the longest line of the bundle stream the client reads: one Bundles, the
// keyless data of at most four reference Secrets and the link CA, is some tens of kilobytes.
const maxStreamLine = 4 << 20

// missedHeartbeats is how many heartbeat intervals of silence make a stream dead.
const missedHeartbeats = 3

// errSilent ends a stream that said nothing for missedHeartbeats heartbeat intervals.
var errSilent = errors.New("the bundle stream said nothing for three heartbeat intervals")

// Stream holds GET /v1/bundles until ctx is done, and hands each Bundles it receives to got,
// in order. A stream that ends, fails, or says nothing for three heartbeat intervals is
// opened again after the Backoff (or the Retry-After of a 429 or 503, when longer); the
// backoff starts over once a stream delivered a message. state, when set, hears nil once a
// stream delivered its first message, and each error that ended one or kept one from
// opening, so that its caller tells a connected link from a failing one.
func (c *Client) Stream(ctx context.Context, got func(link.Bundles), state func(error)) {
	backoff := c.Backoff
	for ctx.Err() == nil {
		delivered, err := c.streamOnce(ctx, got, state)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("the listener ended the bundle stream")
		}
		if state != nil {
			state(err)
		}
		if delivered {
			backoff = c.Backoff
		}
		wait := backoff.Step()
		if after, ok := RetryAfter(err); ok && after > wait {
			wait = after
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// streamOnce holds one stream until it ends, and reports whether it delivered a message.
func (c *Client) streamOnce(ctx context.Context, got func(link.Bundles), state func(error)) (delivered bool, _ error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	silence := time.Duration(missedHeartbeats) * c.Heartbeat
	// The timer covers the wait for the answer's headers too: a listener that accepts the
	// connection and says nothing is as dead as a silent stream.
	watchdog := time.AfterFunc(silence, func() { cancel(errSilent) })
	defer watchdog.Stop()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url(link.BundlesPath), nil)
	if err != nil {
		return false, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return false, streamErr(ctx, fmt.Errorf("GET %s to the link's listener: %w", link.BundlesPath, err))
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return false, statusError("GET "+link.BundlesPath, resp)
	}
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 0, 64<<10), maxStreamLine)
	for lines.Scan() {
		watchdog.Reset(silence)
		var m link.StreamMessage
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			return delivered, fmt.Errorf("a line of the bundle stream: %w", err)
		}
		if !delivered && state != nil {
			state(nil)
		}
		delivered = true
		if m.Type == link.BundlesMessage && m.Bundles != nil {
			got(*m.Bundles)
		}
	}
	return delivered, streamErr(ctx, lines.Err())
}

// streamErr is err, or errSilent when the watchdog ended the stream.
func streamErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); errors.Is(cause, errSilent) {
		return errSilent
	}
	return err
}
