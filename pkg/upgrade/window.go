package upgrade

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// The bounds of a maintenance window's duration.
const (
	MinWindowDuration = 30 * time.Minute
	MaxWindowDuration = 24 * time.Hour
)

// Weekdays are the names a window's days are written with, Sunday first as time.Weekday
// counts them.
var Weekdays = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// ParseWeekday is the weekday of a window's day name ("Monday").
func ParseWeekday(name string) (time.Weekday, bool) {
	for i, d := range Weekdays {
		if d == name {
			return time.Weekday(i), true
		}
	}
	return 0, false
}

var clockTime = regexp.MustCompile(`^([01][0-9]|2[0-3]):([0-5][0-9])$`)

// ParseStart is the hour and minute of a window's start, "HH:MM" from 00:00 to 23:59.
func ParseStart(s string) (hour, minute int, ok bool) {
	m := clockTime.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	hour, _ = strconv.Atoi(m[1])
	minute, _ = strconv.Atoi(m[2])
	return hour, minute, true
}

// LoadTimeZone is the location of a window's time zone, an IANA name; UTC when empty. The
// server's own local zone ("Local") is refused: the window would move with the host the
// server runs on. The server carries the zone database (time/tzdata), so a name loads in a
// container without one.
func LoadTimeZone(name string) (*time.Location, error) {
	if name == "Local" {
		return nil, fmt.Errorf("the server's local time zone is not a time zone of the setup's: name one, such as Europe/Berlin")
	}
	return time.LoadLocation(name)
}

// Window is a weekly maintenance window, read.
type Window struct {
	// days holds the weekdays on which the window opens, all when empty.
	days         map[time.Weekday]bool
	hour, minute int
	duration     time.Duration
	loc          *time.Location
}

// NewWindow reads w; its error says what validation refuses.
func NewWindow(w operatorv1alpha1.MaintenanceWindow) (Window, error) {
	hour, minute, ok := ParseStart(w.Start)
	if !ok {
		return Window{}, fmt.Errorf("start %q is not HH:MM between 00:00 and 23:59", w.Start)
	}
	d := w.Duration.Duration
	if d < MinWindowDuration || d > MaxWindowDuration {
		return Window{}, fmt.Errorf("duration %s is not between %s and %s", d, MinWindowDuration, MaxWindowDuration)
	}
	loc, err := LoadTimeZone(w.TimeZone)
	if err != nil {
		return Window{}, fmt.Errorf("time zone %q: %w", w.TimeZone, err)
	}
	win := Window{hour: hour, minute: minute, duration: d, loc: loc}
	for _, name := range w.Days {
		day, ok := ParseWeekday(name)
		if !ok {
			return Window{}, fmt.Errorf("day %q is not a weekday name (Monday … Sunday)", name)
		}
		if win.days == nil {
			win.days = map[time.Weekday]bool{}
		}
		win.days[day] = true
	}
	return win, nil
}

// Opening is one opening of a window: from Start until End.
type Opening struct {
	Start, End time.Time
}

// Contains reports whether the opening is open at t: from its start, until before its end.
func (o Opening) Contains(t time.Time) bool { return !t.Before(o.Start) && t.Before(o.End) }

// At says the window's state at now: the opening that is open now (ok false when none is),
// and the next one to open after now. Each opening starts at the window's start on one of
// its days, in its time zone, and lasts its duration of elapsed time, so it may run past
// midnight into the next day, and one across a change of daylight saving time lasts as
// long as any other. A start that a change of daylight saving time skips that day opens at
// the instant the time zone's rules give the skipped wall time (an hour later on the clock).
// A window that closed while the server was down is not made up for: the next opening is
// its next one.
func (w Window) At(now time.Time) (open Opening, ok bool, next Opening) {
	local := now.In(w.loc)
	y, m, d := local.Date()
	// An opening may have started the day before (a window is at most 24h long; a day
	// more for a change of daylight saving time), and one opens within a week.
	for i := -2; i <= 8; i++ {
		// The weekday of the date, whatever a change of daylight saving time does to the hour.
		if w.days != nil && !w.days[time.Date(y, m, d+i, 12, 0, 0, 0, time.UTC).Weekday()] {
			continue
		}
		start := time.Date(y, m, d+i, w.hour, w.minute, 0, 0, w.loc)
		o := Opening{Start: start, End: start.Add(w.duration)}
		switch {
		case o.Contains(now):
			if !ok {
				open, ok = o, true
			}
		case start.After(now):
			return open, ok, o
		}
	}
	// Unreachable for a window with a day: some day of the ten has it.
	return open, ok, Opening{}
}
