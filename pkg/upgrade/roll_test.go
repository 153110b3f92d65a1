package upgrade

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

const (
	from = "v0.31.6"
	to   = "v0.32.3"
)

var now = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// at is a member of kind name whose Deployment is rolled out at running and ready.
func at(kind, name, running string) Observed {
	return Observed{Member: Member{Group: operatorv1alpha1.UpgradeGroup(kind), Kind: kind, Name: name, Running: running}, RolledOut: true}
}

// setup is a RootShard r, a CacheServer c, Shards a and b and a FrontProxy fp (no
// VirtualWorkspace: its group is empty), each at the release of its group in runs.
func setup(runs map[operatorv1alpha1.UpgradeGroup]string) []Observed {
	of := func(g operatorv1alpha1.UpgradeGroup) string {
		if r, ok := runs[g]; ok {
			return r
		}
		return from
	}
	return []Observed{
		at("RootShard", "r", of("RootShard")), at("CacheServer", "c", of("CacheServer")),
		at("Shard", "a", of("Shard")), at("Shard", "b", of("Shard")), at("FrontProxy", "fp", of("FrontProxy")),
	}
}

// rolling is the status.version of a roll from v0.31.6 to v0.32.3 at group g, started at
// start, whose groups before g are given the target.
func rolling(g operatorv1alpha1.UpgradeGroup, start time.Time) *operatorv1alpha1.SetupVersion {
	v := &operatorv1alpha1.SetupVersion{Current: from, Target: to, Group: g, GroupStartTime: &metav1.Time{Time: start}}
	for _, c := range []struct{ kind, name string }{{"CacheServer", "c"}, {"RootShard", "r"}, {"Shard", "a"}, {"Shard", "b"}, {"FrontProxy", "fp"}} {
		desired := from
		if Index(operatorv1alpha1.UpgradeGroup(c.kind)) <= Index(g) {
			desired = to
		}
		v.Components = append(v.Components, operatorv1alpha1.ComponentVersion{Kind: c.kind, Name: c.name, Desired: desired})
	}
	return v
}

func desired(v *operatorv1alpha1.SetupVersion) map[string]string {
	out := map[string]string{}
	for _, c := range v.Components {
		out[c.Kind+"/"+c.Name] = c.Desired
	}
	return out
}

func TestStepStartsTheRollAtTheFirstGroupWithWork(t *testing.T) {
	r := Step(to, nil, nil, setup(nil), now)
	require.NotNil(t, r.Version)
	assert.Equal(t, from, r.Version.Current)
	assert.Equal(t, to, r.Version.Target)
	assert.Equal(t, operatorv1alpha1.UpgradeGroupCacheServer, r.Version.Group)
	assert.Equal(t, now, r.Version.GroupStartTime.Time)
	assert.Equal(t, map[string]string{"CacheServer/c": to, "RootShard/r": from, "Shard/a": from, "Shard/b": from, "FrontProxy/fp": from}, desired(r.Version))
	assert.Equal(t, &Condition{metav1.ConditionTrue, operatorv1alpha1.ReasonUpgradeRolling,
		"group CacheServer (1 of 5) to v0.32.3: waiting for CacheServer/c: its Deployment runs v0.31.6"}, r.Condition)
	assert.Equal(t, now.Add(DefaultProgressDeadline), r.Requeue)
	assert.False(t, r.Halted)
	// The components in the order of the groups.
	var order []string
	for _, c := range r.Version.Components {
		order = append(order, c.Kind+"/"+c.Name)
	}
	assert.Equal(t, []string{"CacheServer/c", "RootShard/r", "Shard/a", "Shard/b", "FrontProxy/fp"}, order)
}

func TestStepChangesTheTargetOfARoll(t *testing.T) {
	prev := &operatorv1alpha1.SetupVersion{Current: from, Target: from}
	for _, c := range setup(nil) {
		prev.Components = append(prev.Components, operatorv1alpha1.ComponentVersion{Kind: c.Kind, Name: c.Name, Desired: from, Running: from})
	}
	r := Step(to, prev, nil, setup(nil), now)
	assert.Equal(t, to, r.Version.Target)
	assert.Equal(t, operatorv1alpha1.UpgradeGroupCacheServer, r.Version.Group)
	assert.Equal(t, to, desired(r.Version)["CacheServer/c"])
	assert.Equal(t, from, desired(r.Version)["RootShard/r"])
}

func TestStepGate(t *testing.T) {
	start := now.Add(-time.Minute)
	notRolledOut := setup(map[operatorv1alpha1.UpgradeGroup]string{"CacheServer": to, "RootShard": to, "Shard": to})
	notRolledOut[3].RolledOut, notRolledOut[3].Rollout = false, "Deployment b-shard-kcp: 1 of 2 replicas are updated and ready"
	notReady := setup(map[operatorv1alpha1.UpgradeGroup]string{"CacheServer": to, "RootShard": to, "Shard": to})
	notReady[2].NotReady = "KcpReady=False, NotReady: etcd"
	for name, tc := range map[string]struct {
		members []Observed
		group   operatorv1alpha1.UpgradeGroup
		want    string
	}{
		"the group waits for a Deployment still at the old release": {setup(map[operatorv1alpha1.UpgradeGroup]string{"CacheServer": to, "RootShard": to}),
			"Shard", "group Shard (3 of 5) to v0.32.3: waiting for Shard/a: its Deployment runs v0.31.6"},
		"the group waits for a rollout": {notRolledOut, "Shard",
			"group Shard (3 of 5) to v0.32.3: waiting for Shard/b: Deployment b-shard-kcp: 1 of 2 replicas are updated and ready"},
		"the group waits for a member that is not ready": {notReady, "Shard",
			"group Shard (3 of 5) to v0.32.3: waiting for Shard/a: KcpReady=False, NotReady: etcd"},
		"a done group moves on, past an empty one": {setup(map[operatorv1alpha1.UpgradeGroup]string{"CacheServer": to, "RootShard": to, "Shard": to}),
			"FrontProxy", "group FrontProxy (5 of 5) to v0.32.3: waiting for FrontProxy/fp: its Deployment runs v0.31.6"},
	} {
		t.Run(name, func(t *testing.T) {
			r := Step(to, rolling("Shard", start), nil, tc.members, now)
			assert.Equal(t, tc.group, r.Version.Group)
			assert.Equal(t, operatorv1alpha1.ReasonUpgradeRolling, r.Condition.Reason)
			assert.Equal(t, tc.want, r.Condition.Message)
			if tc.group == "Shard" {
				assert.Equal(t, start, r.Version.GroupStartTime.Time, "the group's start stays")
				assert.Equal(t, from, desired(r.Version)["FrontProxy/fp"], "nothing later changes")
			} else {
				assert.Equal(t, now, r.Version.GroupStartTime.Time)
				assert.Equal(t, to, desired(r.Version)["FrontProxy/fp"])
			}
		})
	}
}

func TestStepEndsUpToDate(t *testing.T) {
	r := Step(to, rolling("FrontProxy", now.Add(-time.Minute)), nil, setup(map[operatorv1alpha1.UpgradeGroup]string{"CacheServer": to, "RootShard": to, "Shard": to, "FrontProxy": to}), now)
	assert.Equal(t, to, r.Version.Current)
	assert.Empty(t, r.Version.Group)
	assert.Nil(t, r.Version.GroupStartTime)
	assert.Equal(t, &Condition{metav1.ConditionFalse, operatorv1alpha1.ReasonUpToDate, "every component runs v0.32.3"}, r.Condition)
	assert.True(t, r.Requeue.IsZero())
	for _, c := range r.Version.Components {
		assert.Equal(t, to, c.Running, c.Name)
	}
}

func TestStepHaltsAtTheDeadlineAndResumes(t *testing.T) {
	s := &operatorv1alpha1.UpgradeStrategy{ProgressDeadlineSeconds: ptr.To[int32](60)}
	members := setup(map[operatorv1alpha1.UpgradeGroup]string{"CacheServer": to, "RootShard": to, "Shard": to})
	members[3].NotReady = "Available=False, ReplicasUnavailable: 0 of 1 replicas are updated and ready"

	before := Step(to, rolling("Shard", now.Add(-59*time.Second)), s, members, now)
	assert.False(t, before.Halted)
	assert.Equal(t, now.Add(time.Second), before.Requeue, "looked at again at the deadline")

	halted := Step(to, rolling("Shard", now.Add(-61*time.Second)), s, members, now)
	assert.True(t, halted.Halted)
	assert.Equal(t, &Condition{metav1.ConditionFalse, operatorv1alpha1.ReasonUpgradeHalted,
		"group Shard (3 of 5) to v0.32.3 did not finish within 1m0s: Shard/b: Available=False, ReplicasUnavailable: 0 of 1 replicas are updated and ready"}, halted.Condition)
	assert.Equal(t, operatorv1alpha1.UpgradeGroupShard, halted.Version.Group)
	assert.Equal(t, from, desired(halted.Version)["FrontProxy/fp"], "nothing further changes")

	members[3].NotReady = ""
	resumed := Step(to, halted.Version, s, members, now)
	assert.False(t, resumed.Halted)
	assert.Equal(t, operatorv1alpha1.UpgradeGroupFrontProxy, resumed.Version.Group)
	assert.Equal(t, operatorv1alpha1.ReasonUpgradeRolling, resumed.Condition.Reason)
}

func TestStepPaused(t *testing.T) {
	paused := &operatorv1alpha1.UpgradeStrategy{Paused: true}
	done := setup(map[operatorv1alpha1.UpgradeGroup]string{"CacheServer": to, "RootShard": to, "Shard": to})

	r := Step(to, rolling("Shard", now.Add(-time.Hour)), paused, done, now)
	assert.Equal(t, operatorv1alpha1.UpgradeGroupShard, r.Version.Group, "the next group does not start")
	assert.Equal(t, from, desired(r.Version)["FrontProxy/fp"])
	assert.False(t, r.Halted, "a paused roll does not halt")
	assert.Equal(t, &Condition{metav1.ConditionFalse, operatorv1alpha1.ReasonUpgradePaused,
		"group Shard (3 of 5) to v0.32.3 is done; paused before the next group"}, r.Condition)

	r = Step(to, nil, paused, setup(nil), now)
	assert.Empty(t, r.Version.Group, "no group starts")
	assert.Equal(t, from, desired(r.Version)["CacheServer/c"])
	assert.Equal(t, &Condition{metav1.ConditionFalse, operatorv1alpha1.ReasonUpgradePaused, "paused before group CacheServer to v0.32.3"}, r.Condition)

	r = Step(to, r.Version, nil, setup(nil), now)
	assert.Equal(t, operatorv1alpha1.UpgradeGroupCacheServer, r.Version.Group, "unpaused, the roll starts")
}

func TestStepLeavesPinnedMembers(t *testing.T) {
	members := setup(map[operatorv1alpha1.UpgradeGroup]string{"CacheServer": to, "RootShard": to})
	members[2].Pinned, members[2].Running = "v0.31.4", "v0.31.4" // Shard/a
	r := Step(to, rolling("Shard", now), nil, members, now)
	assert.Equal(t, "v0.31.4", desired(r.Version)["Shard/a"])
	assert.Equal(t, "group Shard (3 of 5) to v0.32.3: waiting for Shard/b: its Deployment runs v0.31.6", r.Condition.Message, "not waited for")
	for _, c := range r.Version.Components {
		assert.Equal(t, c.Name == "a", c.Pinned, c.Name)
	}
}

func TestStepOfANewSetupIsUpToDate(t *testing.T) {
	members := []Observed{{Member: Member{Group: "RootShard", Kind: "RootShard", Name: "r"}}}
	r := Step(to, nil, nil, members, now)
	assert.Equal(t, to, r.Version.Current)
	assert.Empty(t, r.Version.Group)
	assert.Equal(t, to, desired(r.Version)["RootShard/r"])
	assert.Equal(t, operatorv1alpha1.ReasonUpToDate, r.Condition.Reason)
}

func TestStepWithoutVersion(t *testing.T) {
	assert.Equal(t, Result{}, Step("", &operatorv1alpha1.SetupVersion{Current: from, Target: from}, nil, nil, now))
	window := &metav1.Time{Time: now}
	r := Step("", &operatorv1alpha1.SetupVersion{Current: from, NextWindowStart: window, NextWindowVersion: "v0.31.7"}, nil, nil, now)
	assert.Equal(t, &operatorv1alpha1.SetupVersion{NextWindowStart: window, NextWindowVersion: "v0.31.7"}, r.Version)
	assert.Nil(t, r.Condition)
}

func TestStepKeepsTheWindow(t *testing.T) {
	prev := rolling("Shard", now)
	prev.NextWindowStart, prev.NextWindowVersion = &metav1.Time{Time: now.Add(time.Hour)}, "v0.32.4"
	r := Step(to, prev, nil, setup(nil), now)
	assert.Equal(t, prev.NextWindowStart, r.Version.NextWindowStart)
	assert.Equal(t, "v0.32.4", r.Version.NextWindowVersion)
}

func TestLowest(t *testing.T) {
	members := []Observed{at("Shard", "a", "v0.32.1"), at("Shard", "b", "v0.31.6"), at("Shard", "c", "")}
	pinned := at("Shard", "d", "v0.30.0")
	pinned.Pinned = "v0.30.0"
	assert.Equal(t, "v0.31.6", Lowest(append(members, pinned), to))
	assert.Equal(t, to, Lowest(nil, to))
}
