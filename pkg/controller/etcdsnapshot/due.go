// Package etcdsnapshot drives a managed etcd's snapshots from its owner's reconcile
// (docs/etcd.md, "Backups and restore"): the schedule's pure arithmetic (Due), what status
// shows of the store (Snapshots), and the Runner that asks the backup agent for a snapshot
// apart from the reconcile, one at a time per etcd.
package etcdsnapshot

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// windows are how far back Due looks for the most recent missed schedule time, widening
// until one holds a time: a schedule that fires often is found in the first, and the count
// of times walked stays small for any schedule.
var windows = []time.Duration{2 * time.Minute, 2 * time.Hour, 2 * 24 * time.Hour, 64 * 24 * time.Hour, 366 * 24 * time.Hour, 5 * 366 * 24 * time.Hour}

// Schedule is a backup's schedule: five cron fields, in a time zone (nil is UTC).
type Schedule struct {
	Cron     string
	TimeZone *string
}

// Due answers, at now, the schedule time to take a snapshot for (zero when none is due: the
// most recent schedule time after since and not after now, one however many were missed, as
// a CronJob without a starting deadline catches up once), and the next schedule time after
// now, when the owner comes back. since is the last schedule time taken, or the owner's
// creation.
func Due(s Schedule, since, now time.Time) (due, next time.Time, err error) {
	sched, err := cron.ParseStandard(s.Cron)
	if err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("schedule %q: %w", s.Cron, err)
	}
	loc := time.UTC
	if s.TimeZone != nil && *s.TimeZone != "" {
		if loc, err = time.LoadLocation(*s.TimeZone); err != nil {
			return time.Time{}, time.Time{}, fmt.Errorf("time zone %q: %w", *s.TimeZone, err)
		}
	}
	next = sched.Next(now.In(loc))
	if !since.Before(now) {
		return time.Time{}, next, nil
	}
	for _, w := range windows {
		from := now.Add(-w)
		if from.Before(since) {
			from = since
		}
		t := sched.Next(from.In(loc))
		if t.IsZero() || t.After(now) {
			if from.Equal(since) {
				break
			}
			continue
		}
		for {
			n := sched.Next(t)
			if n.IsZero() || n.After(now) {
				return t, next, nil
			}
			t = n
		}
	}
	return time.Time{}, next, nil
}
