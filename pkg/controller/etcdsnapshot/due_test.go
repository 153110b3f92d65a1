package etcdsnapshot

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestDue: the most recent schedule time after the last one taken (or the creation) and not
// after now is due, one however many were missed; the next comes after now; the schedule
// runs in its time zone.
func TestDue(t *testing.T) {
	for _, tc := range []struct {
		name       string
		s          Schedule
		since, now string
		due, next  string // "" for none
		err        string
	}{{
		name: "nothing since the creation", s: Schedule{Cron: "0 */6 * * *"},
		since: "2026-11-28T10:00:00Z", now: "2026-11-28T11:59:59Z", next: "2026-11-28T12:00:00Z",
	}, {
		name: "due at its time", s: Schedule{Cron: "0 */6 * * *"},
		since: "2026-11-28T10:00:00Z", now: "2026-11-28T12:00:00Z", due: "2026-11-28T12:00:00Z", next: "2026-11-28T18:00:00Z",
	}, {
		name: "taken: not due again", s: Schedule{Cron: "0 */6 * * *"},
		since: "2026-11-28T12:00:00Z", now: "2026-11-28T12:00:30Z", next: "2026-11-28T18:00:00Z",
	}, {
		name: "missed while the server was down: one catch-up, the most recent", s: Schedule{Cron: "0 */6 * * *"},
		since: "2026-11-20T12:00:00Z", now: "2026-11-28T13:10:00Z", due: "2026-11-28T12:00:00Z", next: "2026-11-28T18:00:00Z",
	}, {
		name: "every minute, down for a year: the last minute", s: Schedule{Cron: "* * * * *"},
		since: "2025-11-28T13:10:00Z", now: "2026-11-28T13:10:30Z", due: "2026-11-28T13:10:00Z", next: "2026-11-28T13:11:00Z",
	}, {
		name: "monthly, missed two months ago", s: Schedule{Cron: "0 0 1 * *"},
		since: "2026-08-15T00:00:00Z", now: "2026-11-28T00:00:00Z", due: "2026-11-01T00:00:00Z", next: "2026-12-01T00:00:00Z",
	}, {
		name: "in a time zone: 02:00 in Berlin is 01:00 UTC in winter", s: Schedule{Cron: "0 2 * * *", TimeZone: ptr.To("Europe/Berlin")},
		since: "2026-11-27T12:00:00Z", now: "2026-11-28T01:00:00Z", due: "2026-11-28T01:00:00Z", next: "2026-11-29T01:00:00Z",
	}, {
		name: "in a time zone, not yet: 02:00 UTC has passed but not 02:00 in New York", s: Schedule{Cron: "0 2 * * *", TimeZone: ptr.To("America/New_York")},
		since: "2026-11-27T12:00:00Z", now: "2026-11-28T03:00:00Z", next: "2026-11-28T07:00:00Z",
	}, {
		name: "a bad time zone", s: Schedule{Cron: "0 2 * * *", TimeZone: ptr.To("Mars/Olympus")},
		since: "2026-11-27T12:00:00Z", now: "2026-11-28T03:00:00Z", err: "Mars/Olympus",
	}, {
		name: "a bad schedule", s: Schedule{Cron: "every day"},
		since: "2026-11-27T12:00:00Z", now: "2026-11-28T03:00:00Z", err: "every day",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			due, next, err := Due(tc.s, at(tc.since), at(tc.now))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			if tc.due == "" {
				assert.True(t, due.IsZero(), "nothing due, got %s", due)
			} else {
				assert.True(t, at(tc.due).Equal(due), "due %s, got %s", tc.due, due)
			}
			assert.True(t, at(tc.next).Equal(next), "next %s, got %s", tc.next, next)
		})
	}
}
