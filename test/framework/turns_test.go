package framework

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// turnsRun takes a turn for each test of tests (name and need) at once, starts the turns once
// all wait, and returns the order the tests got theirs in. A test gives its turn back only when
// the caller says so, through the returned function, so the test sees who runs together.
func turnsRun(t *testing.T, n int, longestFirst []string, tests [][2]any) (started chan string, give func(name string)) {
	t.Helper()
	s := NewTurns(n, longestFirst, time.Hour)
	started = make(chan string, len(tests))
	gives := map[string]chan struct{}{}
	for _, tc := range tests {
		gives[tc[0].(string)] = make(chan struct{})
	}
	for _, tc := range tests {
		name, need := tc[0].(string), tc[1].(Need)
		go func() {
			s.Take(name, need)
			started <- name
			<-gives[name]
			s.Give(need)
		}()
	}
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.waiting) == len(tests)
	}, 10*time.Second, time.Millisecond, "every test waits for its turn")
	s.start()
	return started, func(name string) { close(gives[name]) }
}

// next is the next test to start, or "" when none starts.
func next(started chan string) string {
	select {
	case name := <-started:
		return name
	case <-time.After(200 * time.Millisecond):
		return ""
	}
}

func TestTurnsStartTheLongestFirst(t *testing.T) {
	started, give := turnsRun(t, 1, []string{"long", "longer"}, [][2]any{
		{"short", Alone}, {"longer", Alone}, {"other", Alone}, {"long", Alone},
	})
	var order []string
	for range 4 {
		name := next(started)
		require.NotEmpty(t, name, "a turn is given back, so the next test starts")
		assert.Empty(t, next(started), "one turn: no second test runs beside %s", name)
		order = append(order, name)
		give(name)
	}
	assert.Equal(t, "long", order[0])
	assert.Equal(t, "longer", order[1])
	assert.ElementsMatch(t, []string{"short", "other"}, order[2:])
}

func TestTurnsKeepTheRolesOwnerAlone(t *testing.T) {
	started, give := turnsRun(t, 3, []string{"helm"}, [][2]any{
		{"tenant", SharedRoles}, {"helm", OwnRoles}, {"deputy", SharedRoles}, {"setup", Alone},
	})
	first := []string{next(started), next(started)}
	assert.ElementsMatch(t, []string{"helm", "setup"}, first, "the owner and a test that needs no roles")
	assert.Empty(t, next(started), "no test that shares the roles runs beside their owner, though a turn is free")
	give("helm")
	assert.ElementsMatch(t, []string{"tenant", "deputy"}, []string{next(started), next(started)})
	give("tenant")
	give("deputy")
	give("setup")
}

func TestTurnsLetNoSharerPassAWaitingOwner(t *testing.T) {
	// The owner ranks after the sharers that run, and before the one that comes later.
	started, give := turnsRun(t, 3, []string{"tenant", "helm"}, [][2]any{
		{"tenant", SharedRoles}, {"helm", OwnRoles}, {"deputy", SharedRoles},
	})
	assert.Equal(t, "tenant", next(started))
	assert.Empty(t, next(started), "the owner waits for the sharer, and the later sharer for the owner")
	give("tenant")
	assert.Equal(t, "helm", next(started))
	assert.Empty(t, next(started))
	give("helm")
	assert.Equal(t, "deputy", next(started))
	give("deputy")
}
