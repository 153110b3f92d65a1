package etcdmaint

import (
	"cmp"
	"slices"
)

// Member is one member as a round observed it.
type Member struct {
	// Name is the member's pod name.
	Name string
	Status
	// Err is why the member did not answer; its Status is then unknown.
	Err string
}

// IsLeader says whether the member leads the cluster.
func (m Member) IsLeader() bool { return m.Err == "" && m.MemberID != 0 && m.Leader == m.MemberID }

// Policy is when members are defragmented, and the quota NOSPACE is disarmed under.
type Policy struct {
	// ThresholdPercent is the share of a database file not in use from which a member is
	// defragmented; MinimumSize the database size below which it never is, routinely.
	ThresholdPercent int32
	MinimumSize      int64
	// Quota is the members' backend quota in bytes.
	Quota int64
}

// Fragmented says whether m is due a routine defragmentation: its database is at least
// MinimumSize, and at least ThresholdPercent of it is not in use.
func (p Policy) Fragmented(m Member) bool {
	if m.Err != "" || m.DBSize <= 0 || m.DBSize < p.MinimumSize {
		return false
	}
	return (m.DBSize-m.DBSizeInUse)*100 >= int64(p.ThresholdPercent)*m.DBSize
}

// Kind is what a round of maintenance does.
type Kind int

const (
	// Nothing is to be done.
	Nothing Kind = iota
	// DefragmentOne defragments one member, Action.Member.
	DefragmentOne
	// Recover recovers from NOSPACE: one compaction, every member defragmented one at a
	// time in DefragmentationOrder, then NOSPACE disarmed once Disarmable.
	Recover
	// Blocked is an alarm the server does not clear (CORRUPT): a human must.
	Blocked
)

// Action is what a round does, and why, in words, when it does nothing about a problem.
type Action struct {
	Kind   Kind
	Member string
	Why    string
}

// Next is the action of a round that observed members and alarms, with the NOSPACE quota that
// stopped a recovery before (stuck, 0 when none did: a recovery that could not bring every
// member under the quota is not tried again until the quota changes). Nothing is done unless
// every member answered: the member defragmented last must be back before the next one is.
func Next(members []Member, alarms []Alarm, p Policy, stuck int64) Action {
	if HasAlarm(alarms, AlarmCorrupt) {
		return Action{Kind: Blocked, Why: "etcd raised CORRUPT: a corrupted member needs a human, the server never disarms it"}
	}
	for _, m := range members {
		if m.Err != "" {
			return Action{Why: "member " + m.Name + " did not answer"}
		}
	}
	if HasAlarm(alarms, AlarmNoSpace) {
		if stuck != 0 && stuck == p.Quota {
			return Action{Why: "the data in use exceeds the quota after compaction and defragmentation: raise spec.etcd.managed.quota"}
		}
		return Action{Kind: Recover}
	}
	for _, m := range DefragmentationOrder(members) {
		if p.Fragmented(m) {
			return Action{Kind: DefragmentOne, Member: m.Name}
		}
	}
	return Action{}
}

// DefragmentationOrder is the order members are defragmented in: the followers by name,
// then the leader, whose defragmentation would stall the cluster's writes the longest.
func DefragmentationOrder(members []Member) []Member {
	out := slices.Clone(members)
	slices.SortStableFunc(out, func(a, b Member) int {
		if a.IsLeader() != b.IsLeader() {
			if a.IsLeader() {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}

// Disarmable says whether NOSPACE may be disarmed: every member answered and its database
// is below the quota, so that writes are not refused again at once.
func Disarmable(members []Member, quota int64) bool {
	if len(members) == 0 {
		return false
	}
	for _, m := range members {
		if m.Err != "" || m.DBSize >= quota {
			return false
		}
	}
	return true
}

// HasAlarm says whether alarms holds one of type t.
func HasAlarm(alarms []Alarm, t string) bool {
	return slices.ContainsFunc(alarms, func(a Alarm) bool { return a.Type == t })
}

// SizeChanged says whether a size observed differs enough from the one reported to be
// reported again: by more than a twentieth, so that an idle member's wobbling sizes do not
// write status each round.
func SizeChanged(reported, observed int64) bool {
	d := observed - reported
	if d < 0 {
		d = -d
	}
	return d*20 > reported
}
