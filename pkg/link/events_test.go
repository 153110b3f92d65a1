package link

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

func TestMerge(t *testing.T) {
	key := ConsumerKey{Kind: Shard, Namespace: "remote", Name: "eu"}
	available := ConsumerReport{Realized: true, Available: true, KcpShard: "eu", BaseURL: "https://eu.shards.kcp.example.com:6443",
		CAs: map[pki.CA]CATrust{pki.ServerCA: {Trusted: []string{"old"}, Served: []string{"old"}}}}
	rotating := available
	rotating.CAs = map[pki.CA]CATrust{pki.ServerCA: {Trusted: []string{"new", "old"}, Served: []string{"old"}}}
	ev := func(uid string, gen, seq int64, state ConsumerReport) Event {
		return Event{ConsumerKey: key, UID: uid, Generation: gen, Sequence: seq, State: state}
	}
	at := func(e Event, retired ...string) ConsumerState { return ConsumerState{Last: e, Retired: retired} }
	current := at(ev("u1", 2, 10, available))

	for _, tc := range []struct {
		name    string
		prev    ConsumerState
		ev      Event
		next    ConsumerState
		changed bool
	}{
		{name: "the first event", ev: ev("u1", 2, 10, available), next: current, changed: true},
		{name: "a newer report", prev: current, ev: ev("u1", 2, 11, rotating), next: at(ev("u1", 2, 11, rotating)), changed: true},
		{name: "a newer generation", prev: current, ev: ev("u1", 3, 11, available), next: at(ev("u1", 3, 11, available)), changed: true},
		{name: "a newer event that reports the same keeps its sequence", prev: current, ev: ev("u1", 2, 11, available),
			next: at(ev("u1", 2, 11, available))},
		{name: "a replay", prev: current, ev: ev("u1", 2, 10, rotating), next: current},
		{name: "an older sequence", prev: current, ev: ev("u1", 2, 9, rotating), next: current},
		{name: "an older generation", prev: current, ev: ev("u1", 1, 11, rotating), next: current},
		{name: "a new UID replaces, whatever its numbers", prev: current, ev: ev("u2", 1, 1, rotating),
			next: at(ev("u2", 1, 1, rotating), "u1"), changed: true},
		{name: "a late event of the replaced UID", prev: at(ev("u2", 1, 1, rotating), "u1"), ev: ev("u1", 5, 50, available),
			next: at(ev("u2", 1, 1, rotating), "u1")},
		{name: "a late event of a UID replaced before a restart of the home", prev: ConsumerState{Retired: []string{"u1"}},
			ev: ev("u1", 5, 50, available), next: ConsumerState{Retired: []string{"u1"}}},
		{name: "another consumer's event", prev: current, ev: Event{ConsumerKey: ConsumerKey{Kind: Shard, Namespace: "remote", Name: "us"},
			UID: "u9", Generation: 1, Sequence: 99}, next: current},
		{name: "no UID", prev: current, ev: ev("", 3, 99, rotating), next: current},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next, changed := Merge(tc.prev, tc.ev)
			assert.Equal(t, tc.next, next)
			assert.Equal(t, tc.changed, changed)
		})
	}
}

func TestMergeIsIdempotentInAnyOrder(t *testing.T) {
	events := []Event{}
	for seq := int64(1); seq <= 5; seq++ {
		events = append(events, Event{ConsumerKey: ConsumerKey{Kind: FrontProxy, Name: "edge"}, UID: "u1", Generation: (seq + 1) / 2,
			Sequence: seq, State: ConsumerReport{KcpShard: fmt.Sprint(seq)}})
	}
	var inOrder ConsumerState
	for _, e := range events {
		inOrder, _ = Merge(inOrder, e)
	}
	// Reversed, then replayed whole: the newest wins, and a replay changes nothing.
	var shuffled ConsumerState
	for i := len(events) - 1; i >= 0; i-- {
		shuffled, _ = Merge(shuffled, events[i])
	}
	for _, e := range events {
		var changed bool
		shuffled, changed = Merge(shuffled, e)
		assert.False(t, changed)
	}
	assert.Equal(t, inOrder, shuffled)
	assert.Equal(t, "5", shuffled.Last.State.KcpShard)
}

func TestMergeRemembersALimitedNumberOfUIDs(t *testing.T) {
	var s ConsumerState
	for i := range maxRetired + 3 {
		s, _ = Merge(s, Event{ConsumerKey: ConsumerKey{Kind: Kubeconfig, Name: "ci"}, UID: fmt.Sprint("u", i), Sequence: 1})
	}
	assert.Len(t, s.Retired, maxRetired)
	assert.Equal(t, fmt.Sprint("u", maxRetired+1), s.Retired[maxRetired-1], "the newest retired last")
}
