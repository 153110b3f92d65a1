package etcdmaint

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

const mi = 1 << 20

// member is a member of ID id, led by leader, of size and inUse MiB.
func member(name string, id, leader uint64, size, inUse int64) Member {
	return Member{Name: name, Status: Status{MemberID: id, Leader: leader, DBSize: size * mi, DBSizeInUse: inUse * mi}}
}

func TestFragmented(t *testing.T) {
	p := Policy{ThresholdPercent: 50, MinimumSize: 64 * mi, Quota: 2048 * mi}
	for _, c := range []struct {
		name string
		m    Member
		want bool
	}{
		{"half free at the minimum", member("a", 1, 1, 64, 32), true},
		{"more than half free", member("a", 1, 1, 100, 10), true},
		{"less than half free", member("a", 1, 1, 100, 51), false},
		{"below the minimum size", member("a", 1, 1, 63, 1), false},
		{"empty", member("a", 1, 1, 0, 0), false},
		{"did not answer", Member{Name: "a", Err: "timeout"}, false},
	} {
		assert.Equal(t, c.want, p.Fragmented(c.m), c.name)
	}
	// Without a minimum, any database past the threshold is.
	assert.True(t, Policy{ThresholdPercent: 10}.Fragmented(Member{Status: Status{DBSize: 100, DBSizeInUse: 90}}))
	assert.False(t, Policy{ThresholdPercent: 11}.Fragmented(Member{Status: Status{DBSize: 100, DBSizeInUse: 90}}))
}

func TestDefragmentationOrder(t *testing.T) {
	// b leads (its ID is everyone's leader): followers by name first, the leader last.
	members := []Member{member("c", 3, 2, 1, 1), member("b", 2, 2, 1, 1), member("a", 1, 2, 1, 1)}
	var names []string
	for _, m := range DefragmentationOrder(members) {
		names = append(names, m.Name)
	}
	assert.Equal(t, []string{"a", "c", "b"}, names)
	assert.Equal(t, "c", members[0].Name, "the input is not reordered")
}

func TestNext(t *testing.T) {
	p := Policy{ThresholdPercent: 50, MinimumSize: 0, Quota: 16 * mi}
	tidy := []Member{member("m-0", 1, 2, 4, 4), member("m-1", 2, 2, 4, 4), member("m-2", 3, 2, 4, 4)}
	fragmentedLeaderAndFollower := []Member{member("m-0", 1, 2, 4, 4), member("m-1", 2, 2, 8, 1), member("m-2", 3, 2, 8, 1)}
	down := []Member{member("m-0", 1, 2, 8, 1), {Name: "m-1", Err: "connection refused"}, member("m-2", 3, 2, 4, 4)}
	noSpace := []Alarm{{MemberID: 3, Type: AlarmNoSpace}}
	for _, c := range []struct {
		name    string
		members []Member
		alarms  []Alarm
		stuck   int64
		want    Kind
		member  string
	}{
		{"nothing to do", tidy, nil, 0, Nothing, ""},
		{"a fragmented follower before the fragmented leader", fragmentedLeaderAndFollower, nil, 0, DefragmentOne, "m-2"},
		{"the leader alone", []Member{member("m-0", 1, 2, 4, 4), member("m-1", 2, 2, 8, 1)}, nil, 0, DefragmentOne, "m-1"},
		{"nothing while a member does not answer", down, nil, 0, Nothing, ""},
		{"NOSPACE is recovered", tidy, noSpace, 0, Recover, ""},
		{"NOSPACE before routine work", fragmentedLeaderAndFollower, noSpace, 0, Recover, ""},
		{"NOSPACE waits for every member", down, noSpace, 0, Nothing, ""},
		{"a stuck recovery is not retried under the same quota", tidy, noSpace, 16 * mi, Nothing, ""},
		{"a stuck recovery is retried under a new quota", tidy, noSpace, 8 * mi, Recover, ""},
		{"CORRUPT blocks everything", fragmentedLeaderAndFollower, []Alarm{{MemberID: 1, Type: AlarmCorrupt}, {MemberID: 3, Type: AlarmNoSpace}}, 0, Blocked, ""},
	} {
		got := Next(c.members, c.alarms, p, c.stuck)
		assert.Equal(t, c.want, got.Kind, c.name)
		assert.Equal(t, c.member, got.Member, c.name)
		if c.want == Nothing && (c.alarms != nil || c.members[1].Err != "") || c.want == Blocked {
			assert.NotEmpty(t, got.Why, "%s: says why nothing is done", c.name)
		}
	}
}

func TestDisarmable(t *testing.T) {
	for _, c := range []struct {
		name    string
		members []Member
		want    bool
	}{
		{"every member below the quota", []Member{member("a", 1, 1, 15, 1), member("b", 2, 1, 1, 1)}, true},
		{"a member at the quota", []Member{member("a", 1, 1, 16, 1), member("b", 2, 1, 1, 1)}, false},
		{"a member did not answer", []Member{member("a", 1, 1, 1, 1), {Name: "b", Err: "x"}}, false},
		{"no member", nil, false},
	} {
		assert.Equal(t, c.want, Disarmable(c.members, 16*mi), c.name)
	}
}

func TestSizeChanged(t *testing.T) {
	for _, c := range []struct {
		reported, observed int64
		want               bool
	}{
		{0, 0, false}, {0, 1, true}, {100, 105, false}, {100, 95, false}, {100, 106, true}, {100, 94, true},
	} {
		assert.Equal(t, c.want, SizeChanged(c.reported, c.observed), "%d -> %d", c.reported, c.observed)
	}
}

func TestAlarmResult(t *testing.T) {
	members := []Member{member("m-0", 1, 1, 1, 1), member("m-1", 2, 1, 1, 1)}
	_, ok := AlarmResult(members, nil)
	assert.False(t, ok)
	r, ok := AlarmResult(members, []Alarm{{MemberID: 2, Type: AlarmNoSpace}, {MemberID: 1, Type: AlarmNoSpace}})
	assert.True(t, ok)
	assert.Equal(t, operatorv1alpha1.ReasonAlarmNoSpace, r.Reason)
	assert.Equal(t, metav1.ConditionFalse, r.Status)
	assert.Contains(t, r.Message, "NOSPACE on member m-0, m-1")
	r, _ = AlarmResult(members, []Alarm{{MemberID: 2, Type: AlarmNoSpace}, {MemberID: 0xabc, Type: AlarmCorrupt}})
	assert.Equal(t, operatorv1alpha1.ReasonAlarmCorrupt, r.Reason, "CORRUPT comes first")
	assert.Contains(t, r.Message, "CORRUPT on member abc", "a member that did not answer is named by its ID")
}

func TestMemberStatuses(t *testing.T) {
	defragmented := time.Date(2026, 11, 28, 10, 0, 0, 123, time.UTC)
	at := metav1.NewTime(defragmented.Truncate(time.Second))
	current := []operatorv1alpha1.EtcdMemberStatus{
		{Name: "m-0", DatabaseSize: 100 * mi, DatabaseSizeInUse: 50 * mi, Leader: true},
		{Name: "m-1", DatabaseSize: 100 * mi, DatabaseSizeInUse: 50 * mi, Error: "first error"},
		{Name: "m-2", DatabaseSize: 100 * mi, DatabaseSizeInUse: 50 * mi},
		{Name: "gone"},
	}
	assert.Equal(t, current, MemberStatuses(current, Observed{}), "before the first round, the status stands")

	got := MemberStatuses(current, Observed{
		Members: []Member{
			member("m-0", 1, 2, 102, 51),        // within a twentieth: kept
			{Name: "m-1", Err: "another error"}, // the first error stands
			member("m-2", 2, 2, 200, 10),        // moved: reported
			{Name: "m-3", Err: strings1000()},   // new, truncated
		},
		Alarms:       []Alarm{{MemberID: 2, Type: AlarmNoSpace}, {MemberID: 2, Type: AlarmNoSpace}},
		Defragmented: map[string]time.Time{"m-2": defragmented},
	})
	assert.Equal(t, []operatorv1alpha1.EtcdMemberStatus{
		{Name: "m-0", DatabaseSize: 100 * mi, DatabaseSizeInUse: 50 * mi},
		{Name: "m-1", DatabaseSize: 100 * mi, DatabaseSizeInUse: 50 * mi, Error: "first error"},
		{Name: "m-2", DatabaseSize: 200 * mi, DatabaseSizeInUse: 10 * mi, Leader: true, Alarms: []string{AlarmNoSpace}, LastDefragmentationTime: &at},
		{Name: "m-3", Error: strings1000()[:maxError-3] + "..."},
	}, got)
}

func strings1000() string {
	b := make([]byte, 1000)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}
