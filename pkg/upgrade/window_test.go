package upgrade

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

func window(t *testing.T, zone, start string, d time.Duration, days ...string) Window {
	t.Helper()
	w, err := NewWindow(operatorv1alpha1.MaintenanceWindow{Days: days, Start: start, Duration: metav1.Duration{Duration: d}, TimeZone: zone})
	require.NoError(t, err)
	return w
}

func wallClock(t *testing.T, zone, s string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	require.NoError(t, err)
	v, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	require.NoError(t, err)
	return v
}

// TestWindowAt is the window arithmetic with fixed clocks: 2026-11-28 is a Saturday; in
// Europe/Berlin daylight saving time starts on 2026-03-29 at 02:00 (to 03:00), in
// America/New_York it ends on 2026-11-01 at 02:00 (to 01:00).
func TestWindowAt(t *testing.T) {
	utc := func(s string) time.Time { return wallClock(t, "UTC", s) }
	berlin := func(s string) time.Time { return wallClock(t, "Europe/Berlin", s) }
	newYork := func(s string) time.Time { return wallClock(t, "America/New_York", s) }
	none := Opening{}
	for name, tc := range map[string]struct {
		w        Window
		now      time.Time
		open     Opening
		nextOpen time.Time
	}{
		"before the window": {
			w: window(t, "", "02:00", 2*time.Hour, "Monday"), now: utc("2026-11-28 10:00"),
			open: none, nextOpen: utc("2026-11-30 02:00"),
		},
		"at its start: open": {
			w: window(t, "", "02:00", 2*time.Hour, "Monday"), now: utc("2026-11-30 02:00"),
			open: Opening{utc("2026-11-30 02:00"), utc("2026-11-30 04:00")}, nextOpen: utc("2026-12-07 02:00"),
		},
		"late inside the window (the server was down at its start): open": {
			w: window(t, "", "02:00", 2*time.Hour, "Monday"), now: utc("2026-11-30 03:59"),
			open: Opening{utc("2026-11-30 02:00"), utc("2026-11-30 04:00")}, nextOpen: utc("2026-12-07 02:00"),
		},
		"missed while the server was down: closed, the next is next week": {
			w: window(t, "", "02:00", 2*time.Hour, "Monday"), now: utc("2026-11-30 04:00"),
			open: none, nextOpen: utc("2026-12-07 02:00"),
		},
		"across midnight: Saturday 23:00 for 3h is open on Sunday at 01:00": {
			w: window(t, "", "23:00", 3*time.Hour, "Saturday"), now: utc("2026-11-29 01:00"),
			open: Opening{utc("2026-11-28 23:00"), utc("2026-11-29 02:00")}, nextOpen: utc("2026-12-05 23:00"),
		},
		"across midnight, after it closed": {
			w: window(t, "", "23:00", 3*time.Hour, "Saturday"), now: utc("2026-11-29 02:00"),
			open: none, nextOpen: utc("2026-12-05 23:00"),
		},
		"24h every day: always open, the next opens at the close": {
			w: window(t, "", "00:00", 24*time.Hour), now: utc("2026-11-28 12:00"),
			open: Opening{utc("2026-11-28 00:00"), utc("2026-11-29 00:00")}, nextOpen: utc("2026-11-29 00:00"),
		},
		"no days: every day": {
			w: window(t, "", "22:00", time.Hour), now: utc("2026-11-28 23:30"),
			open: none, nextOpen: utc("2026-11-29 22:00"),
		},
		"several days: the nearest": {
			w: window(t, "", "22:00", time.Hour, "Friday", "Tuesday"), now: utc("2026-11-28 23:30"),
			open: none, nextOpen: utc("2026-12-01 22:00"),
		},
		"a time zone: Berlin's 02:00 is 01:00 UTC in winter": {
			w: window(t, "Europe/Berlin", "02:00", time.Hour, "Sunday"), now: utc("2026-11-29 01:30"),
			open: Opening{utc("2026-11-29 01:00"), utc("2026-11-29 02:00")}, nextOpen: utc("2026-12-06 01:00"),
		},
		"a time zone's weekday, not UTC's: Monday 00:30 in Berlin is Sunday in UTC": {
			w: window(t, "Europe/Berlin", "00:30", time.Hour, "Monday"), now: utc("2026-11-29 23:40"),
			open: Opening{utc("2026-11-29 23:30"), utc("2026-11-30 00:30")}, nextOpen: utc("2026-12-06 23:30"),
		},
		"daylight saving time ends: 09:00 in New York moves from 13:00 to 14:00 UTC": {
			w: window(t, "America/New_York", "09:00", 30*time.Minute), now: newYork("2026-10-31 10:00"),
			open: none, nextOpen: utc("2026-11-01 14:00"),
		},
		"daylight saving time starts inside the window: 3h of elapsed time": {
			w: window(t, "Europe/Berlin", "01:00", 3*time.Hour, "Sunday"), now: berlin("2026-03-29 04:30"),
			open: Opening{utc("2026-03-29 00:00"), utc("2026-03-29 03:00")}, nextOpen: berlin("2026-04-05 01:00"),
		},
		"a start in the hour daylight saving time skips opens an hour later on the clock": {
			w: window(t, "Europe/Berlin", "02:30", time.Hour, "Sunday"), now: utc("2026-03-29 00:00"),
			open: none, nextOpen: utc("2026-03-29 01:30"),
		},
	} {
		t.Run(name, func(t *testing.T) {
			open, ok, next := tc.w.At(tc.now)
			assert.Equal(t, tc.open != none, ok, "open")
			assert.True(t, open.Start.Equal(tc.open.Start) && open.End.Equal(tc.open.End), "the open window: %v, want %v", open, tc.open)
			assert.True(t, next.Start.Equal(tc.nextOpen), "the next opens at %v, want %v", next.Start, tc.nextOpen)
			assert.Equal(t, ok, open.Contains(tc.now))
			assert.True(t, next.Start.After(tc.now))
		})
	}
}

func TestNewWindowRefuses(t *testing.T) {
	for name, w := range map[string]operatorv1alpha1.MaintenanceWindow{
		"start not HH:MM":   {Start: "2:00", Duration: metav1.Duration{Duration: time.Hour}},
		"start 24:00":       {Start: "24:00", Duration: metav1.Duration{Duration: time.Hour}},
		"too short":         {Start: "02:00", Duration: metav1.Duration{Duration: 29 * time.Minute}},
		"too long":          {Start: "02:00", Duration: metav1.Duration{Duration: 24*time.Hour + time.Minute}},
		"not a weekday":     {Start: "02:00", Duration: metav1.Duration{Duration: time.Hour}, Days: []string{"monday"}},
		"unknown time zone": {Start: "02:00", Duration: metav1.Duration{Duration: time.Hour}, TimeZone: "Europe/Atlantis"},
		"the host's local":  {Start: "02:00", Duration: metav1.Duration{Duration: time.Hour}, TimeZone: "Local"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewWindow(w)
			assert.Error(t, err)
		})
	}
}
