package etcdmaint

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// fakeEtcd is a cluster of members behind etcd's JSON gateway, as far as maintenance goes: each
// member has its own server, and the cluster's is member 0's.
type fakeEtcd struct {
	mu       sync.Mutex
	leader   uint64
	revision int64
	alarms   []Alarm
	members  []*fakeMember
	// defragmenting counts the defragmentations running; most is the most that ever ran at
	// once; order is the members in the order their defragmentations started.
	defragmenting, most int
	order               []string
	compactedAt         []int64
	calls               []string
}

type fakeMember struct {
	name        string
	id          uint64
	size, inUse int64
	server      *httptest.Server
}

func newFakeEtcd(t *testing.T, leader int, sizes ...[2]int64) *fakeEtcd {
	f := &fakeEtcd{revision: 1000}
	for i, s := range sizes {
		m := &fakeMember{name: fmt.Sprintf("m-%d", i), id: uint64(100 + i), size: s[0], inUse: s[1]}
		m.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.serve(t, m, w, r) }))
		t.Cleanup(m.server.Close)
		f.members = append(f.members, m)
	}
	f.leader = f.members[leader].id
	return f
}

func (f *fakeEtcd) serve(t *testing.T, m *fakeMember, w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	_ = json.NewDecoder(r.Body).Decode(&req)
	f.mu.Lock()
	f.calls = append(f.calls, m.name+" "+r.URL.Path)
	var out any
	switch r.URL.Path {
	case "/health":
		// etcd's: false under an alarm, unless it is excluded.
		out = map[string]string{"health": "true"}
		for _, a := range f.alarms {
			if a.Type != r.URL.Query().Get("exclude") {
				out = map[string]string{"health": "false"}
			}
		}
	case "/v3/maintenance/status":
		out = map[string]any{"header": map[string]string{"member_id": strconv.FormatUint(m.id, 10), "revision": strconv.FormatInt(f.revision, 10)},
			"dbSize": strconv.FormatInt(m.size, 10), "dbSizeInUse": strconv.FormatInt(m.inUse, 10), "leader": strconv.FormatUint(f.leader, 10)}
	case "/v3/maintenance/alarm":
		switch req["action"] {
		case "GET":
			var alarms []map[string]string
			for _, a := range f.alarms {
				alarms = append(alarms, map[string]string{"memberID": strconv.FormatUint(a.MemberID, 10), "alarm": a.Type})
			}
			out = map[string]any{"alarms": alarms}
		case "DEACTIVATE":
			id, _ := strconv.ParseUint(req["memberID"].(string), 10, 64)
			var kept []Alarm
			for _, a := range f.alarms {
				if a.MemberID != id || a.Type != req["alarm"] {
					kept = append(kept, a)
				}
			}
			f.alarms, out = kept, map[string]any{}
		}
	case "/v3/kv/compaction":
		rev, _ := strconv.ParseInt(req["revision"].(string), 10, 64)
		f.compactedAt = append(f.compactedAt, rev)
		for _, mem := range f.members {
			mem.inUse = 1 * mi
		}
		out = map[string]any{}
	case "/v3/maintenance/defragment":
		f.defragmenting++
		f.most = max(f.most, f.defragmenting)
		f.order = append(f.order, m.name)
		f.mu.Unlock()
		time.Sleep(20 * time.Millisecond) // a defragmentation takes time: another one would overlap
		f.mu.Lock()
		f.defragmenting--
		m.size = m.inUse
		out = map[string]any{}
	}
	f.mu.Unlock()
	if out == nil {
		t.Errorf("unexpected %s %s %v", r.Method, r.URL.Path, req)
		w.WriteHeader(http.StatusNotFound)
		return
	}
	_ = json.NewEncoder(w).Encode(out)
}

func (f *fakeEtcd) target(p Policy, done func()) Target {
	config := func(s *httptest.Server) func() (*rest.Config, error) {
		return func() (*rest.Config, error) { return &rest.Config{Host: s.URL}, nil }
	}
	t := Target{Cluster: config(f.members[0].server), Policy: p, Done: done}
	for _, m := range f.members {
		t.Members = append(t.Members, MemberTarget{Name: m.name, Config: config(m.server)})
	}
	return t
}

func TestRecoverFromNoSpace(t *testing.T) {
	// m-1 leads; m-2 raised NOSPACE at a quota of 16 MiB.
	f := newFakeEtcd(t, 1, [2]int64{16 * mi, 15 * mi}, [2]int64{16 * mi, 15 * mi}, [2]int64{16 * mi, 15 * mi})
	f.alarms = []Alarm{{MemberID: 102, Type: AlarmNoSpace}}
	m := NewMaintainer()
	done := 0
	target := f.target(Policy{ThresholdPercent: 50, Quota: 16 * mi}, func() { done++ })

	r := m.Round(t.Context(), t.Context(), "ns/root-etcd", target)
	assert.Equal(t, operatorv1alpha1.ReasonAlarmNoSpace, r.Reason)
	assert.Equal(t, metav1.ConditionFalse, r.Status)
	assert.Contains(t, r.Message, "NOSPACE on member m-2")
	// A round while the recovery runs starts nothing more.
	m.Round(t.Context(), t.Context(), "ns/root-etcd", target)
	m.Wait()

	assert.Equal(t, []int64{1000}, f.compactedAt, "one compaction, at the current revision")
	assert.Equal(t, []string{"m-0", "m-2", "m-1"}, f.order, "every member once, the followers first, the leader last")
	assert.Equal(t, 1, f.most, "never two defragmentations at once")
	assert.Empty(t, f.alarms, "NOSPACE is disarmed once every member is below the quota")
	assert.Equal(t, 1, done, "the owner is told when the recovery ends")

	observed, events := m.Observed("ns/root-etcd")
	require.Len(t, events, 4)
	for i, name := range []string{"m-0", "m-2", "m-1"} {
		assert.Equal(t, "EtcdDefragmented", events[i].Reason)
		assert.Contains(t, events[i].Message, fmt.Sprintf("member %s: database %d bytes (%d in use) before, %d bytes (%d in use) after",
			name, 16*mi, 15*mi, 1*mi, 1*mi))
	}
	assert.Equal(t, "EtcdAlarmDisarmed", events[3].Reason)
	assert.Len(t, observed.Defragmented, 3)
	_, events = m.Observed("ns/root-etcd")
	assert.Empty(t, events, "Events are handed over once")

	r = m.Round(t.Context(), t.Context(), "ns/root-etcd", target)
	m.Wait()
	assert.Equal(t, operatorv1alpha1.ReasonEtcdHealthy, r.Reason, "EtcdReady is etcd's /health again")
	assert.Len(t, f.order, 3, "nothing more to do")
}

func TestNoSpaceOverTheQuotaStays(t *testing.T) {
	f := newFakeEtcd(t, 0, [2]int64{16 * mi, 15 * mi})
	f.alarms = []Alarm{{MemberID: 100, Type: AlarmNoSpace}}
	m := NewMaintainer()
	// The quota is below what a compaction leaves in use.
	target := f.target(Policy{ThresholdPercent: 50, Quota: mi / 2}, func() {})
	m.Round(t.Context(), t.Context(), "k", target)
	m.Wait()
	assert.Len(t, f.alarms, 1, "not disarmed while a member is over the quota")
	_, events := m.Observed("k")
	require.NotEmpty(t, events)
	assert.Contains(t, events[len(events)-1].Message, "raise spec.etcd.managed.quota")
	m.Round(t.Context(), t.Context(), "k", target)
	m.Wait()
	assert.Len(t, f.compactedAt, 1, "not tried again under the same quota")
}

func TestRoutineDefragmentation(t *testing.T) {
	// m-0 leads; m-0 and m-2 are fragmented past 50%, m-1 is not.
	f := newFakeEtcd(t, 0, [2]int64{8 * mi, 1 * mi}, [2]int64{8 * mi, 6 * mi}, [2]int64{8 * mi, 2 * mi})
	m := NewMaintainer()
	target := f.target(Policy{ThresholdPercent: 50, MinimumSize: 4 * mi, Quota: 2048 * mi}, func() {})
	for range 4 {
		r := m.Round(t.Context(), t.Context(), "k", target)
		assert.Equal(t, operatorv1alpha1.ReasonEtcdHealthy, r.Reason)
		m.Wait()
	}
	assert.Equal(t, []string{"m-2", "m-0"}, f.order, "one member a round, the follower first, the leader last, the tidy one never")
	assert.Empty(t, f.compactedAt, "a routine defragmentation compacts nothing")
	observed, _ := m.Observed("k")
	require.Len(t, observed.Members, 3)
	assert.Equal(t, int64(1*mi), observed.Members[0].DBSize)
	assert.True(t, observed.Members[0].IsLeader())
}

// TestAnUnreachableClusterIsAskedOnce: while /health cannot be reached, a round asks nothing
// else (no member's status, no alarms), so a cluster whose members do not run costs one
// request a round.
func TestAnUnreachableClusterIsAskedOnce(t *testing.T) {
	f := newFakeEtcd(t, 0, [2]int64{8 * mi, 1 * mi}, [2]int64{8 * mi, 1 * mi})
	for _, member := range f.members {
		member.server.Close()
	}
	m := NewMaintainer()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	r := m.Round(t.Context(), ctx, "k", f.target(Policy{ThresholdPercent: 50, Quota: 2048 * mi}, func() {}))
	assert.Equal(t, operatorv1alpha1.ReasonEtcdUnreachable, r.Reason)
	observed, _ := m.Observed("k")
	assert.Empty(t, observed.Members, "no member was asked")
}

func TestNothingWhileAMemberIsDown(t *testing.T) {
	f := newFakeEtcd(t, 0, [2]int64{8 * mi, 1 * mi}, [2]int64{8 * mi, 1 * mi})
	f.members[1].server.Close()
	m := NewMaintainer()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	m.Round(t.Context(), ctx, "k", f.target(Policy{ThresholdPercent: 50, Quota: 2048 * mi}, func() {}))
	m.Wait()
	assert.Empty(t, f.order)
	observed, _ := m.Observed("k")
	assert.NotEmpty(t, observed.Members[1].Err)
}
