package remote

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kcp-setups/apiserver/pkg/link"
)

// TestReporterReportsWhatChangedAndWhatIsDue: a consumer is reported when first seen, when
// its state, generation or UID changes, and a ReportEvery after the last report; a failed
// report is tried again; the sequences grow, even when the clock stands still.
func TestReporterReportsWhatChangedAndWhatIsDue(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	var sent []link.Event
	var failing error
	r := &Reporter{Now: func() time.Time { return now }, Send: func(_ context.Context, b types.NamespacedName, ev link.Event) error {
		assert.Equal(t, types.NamespacedName{Namespace: "b", Name: "eu-1-link-bootstrap"}, b)
		if failing != nil {
			return failing
		}
		sent = append(sent, ev)
		return nil
	}}
	c := Consumer{Key: link.ConsumerKey{Kind: link.Shard, Namespace: "b", Name: "s-1"}, UID: "u-1", Generation: 1,
		Bootstrap: types.NamespacedName{Namespace: "b", Name: "eu-1-link-bootstrap"}, State: link.ConsumerReport{Realized: true}}
	ctx := context.Background()

	r.Report(ctx, []Consumer{c})
	r.Report(ctx, []Consumer{c})
	assert.Len(t, sent, 1, "reported once while nothing changes")

	c.State.Available = true
	r.Report(ctx, []Consumer{c})
	assert.Len(t, sent, 2, "a new state at once")
	assert.Greater(t, sent[1].Sequence, sent[0].Sequence, "the clock stood still, the sequence grows")

	now = now.Add(ReportEvery)
	r.Report(ctx, []Consumer{c})
	assert.Len(t, sent, 3, "again once a ReportEvery")

	failing = errors.New("the listener is down")
	c.Generation = 2
	r.Report(ctx, []Consumer{c})
	failing = nil
	r.Report(ctx, []Consumer{c})
	assert.Len(t, sent, 4, "a failed report is tried again")
	assert.Equal(t, int64(2), sent[3].Generation)

	r.Report(ctx, nil)
	r.Report(ctx, []Consumer{c})
	assert.Len(t, sent, 5, "a consumer gone and back is reported again")
}
