package upgrade

import (
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
)

// Observed is a member as the roll sees it on a reconcile: Running is the tag its
// Deployment's kcp container has in its pod template ("" without a Deployment).
type Observed struct {
	Member
	// RolledOut says that its Deployment is rolled out: observed, every replica updated and
	// available, none of an older template left. Rollout says what it waits for when not.
	RolledOut bool
	Rollout   string
	// NotReady says why the component itself is not ready ("" when it is): its Available
	// condition is not True, or its KcpReady is False.
	NotReady string
}

// ready reports whether o is rolled out at release and ready, and why not.
func (o Observed) ready(release string) (bool, string) {
	switch {
	case o.Running == "":
		return false, "no Deployment yet"
	case !o.RolledOut:
		return false, o.Rollout
	case o.Running != release:
		return false, "its Deployment runs " + o.Running
	case o.NotReady != "":
		return false, o.NotReady
	}
	return true, ""
}

// Condition is the Upgrading condition a step of the roll leaves.
type Condition struct {
	Status          metav1.ConditionStatus
	Reason, Message string
}

// Result is a step of the roll: the next status.version (nil when spec.version is empty and
// nothing of it is to be kept), the Upgrading condition (nil: none), whether the rolling group
// is halted, and when the roll must be looked at again without any event (zero: never).
type Result struct {
	Version   *operatorv1alpha1.SetupVersion
	Condition *Condition
	Halted    bool
	Requeue   time.Time
}

// Step is one step of the roll of a setup whose RootShard has spec.version version, the
// status.version prev and the strategy s, at now: it records the members, starts the roll
// when version changed, gives the rolling group the target, moves to the next group with work
// once every unpinned member of the rolling one is rolled out at the target and ready, and
// says in the condition what the roll waits for, or that it halted (the group did not finish
// within ProgressDeadline(s)), is paused, or is done. The window fields of prev are kept.
func Step(version string, prev *operatorv1alpha1.SetupVersion, s *operatorv1alpha1.UpgradeStrategy, members []Observed, now time.Time) Result {
	if version == "" {
		if prev == nil || prev.NextWindowStart == nil && prev.NextWindowVersion == "" {
			return Result{}
		}
		return Result{Version: &operatorv1alpha1.SetupVersion{NextWindowStart: prev.NextWindowStart, NextWindowVersion: prev.NextWindowVersion}}
	}
	v := prev.DeepCopy()
	if v == nil || v.Target == "" {
		v = initial(version, v, members)
	}
	if v.Target != version {
		v.Target, v.Group, v.GroupStartTime = version, "", nil
	}
	v.Components = components(v, members)
	paused := s != nil && s.Paused
	start := func(g operatorv1alpha1.UpgradeGroup) {
		v.Group, v.GroupStartTime = g, &metav1.Time{Time: now}
	}
	if v.Group == "" && !paused {
		if g := nextGroup(v, -1); g != "" {
			start(g)
		}
	}
	for v.Group != "" {
		give(v)
		if _, _, done := waiting(v, members); !done {
			break
		}
		next := nextGroup(v, Index(v.Group))
		if next == "" {
			v.Current, v.Group, v.GroupStartTime = v.Target, "", nil
			break
		}
		if paused {
			break
		}
		start(next)
	}
	return result(v, s, members, paused, now)
}

// result is the condition of the roll v, and its halt and requeue.
func result(v *operatorv1alpha1.SetupVersion, s *operatorv1alpha1.UpgradeStrategy, members []Observed, paused bool, now time.Time) Result {
	r := Result{Version: v}
	if v.Group == "" {
		if paused && nextGroup(v, -1) != "" {
			r.Condition = &Condition{metav1.ConditionFalse, operatorv1alpha1.ReasonUpgradePaused,
				fmt.Sprintf("paused before group %s to %s", nextGroup(v, -1), v.Target)}
			return r
		}
		r.Condition = &Condition{metav1.ConditionFalse, operatorv1alpha1.ReasonUpToDate, "every component runs " + v.Target}
		return r
	}
	what := fmt.Sprintf("group %s (%d of %d) to %s", v.Group, Index(v.Group)+1, len(Order), v.Target)
	who, why, done := waiting(v, members)
	switch {
	case paused && done:
		r.Condition = &Condition{metav1.ConditionFalse, operatorv1alpha1.ReasonUpgradePaused, what + " is done; paused before the next group"}
	case paused:
		r.Condition = &Condition{metav1.ConditionFalse, operatorv1alpha1.ReasonUpgradePaused, what + ": paused, waiting for " + who + ": " + why}
	default:
		deadline := ProgressDeadline(s)
		started := now
		if v.GroupStartTime != nil {
			started = v.GroupStartTime.Time
		}
		if now.Sub(started) >= deadline {
			r.Halted = true
			r.Condition = &Condition{metav1.ConditionFalse, operatorv1alpha1.ReasonUpgradeHalted,
				fmt.Sprintf("%s did not finish within %s: %s: %s", what, deadline, who, why)}
			return r
		}
		r.Requeue = started.Add(deadline)
		r.Condition = &Condition{metav1.ConditionTrue, operatorv1alpha1.ReasonUpgradeRolling, what + ": waiting for " + who + ": " + why}
	}
	return r
}

// initial is the first status.version of a setup at version: current is the lowest release
// its members run (version when none runs), the target version, each member recorded at
// what it runs (the target without a Deployment). The window fields of prev are kept.
func initial(version string, prev *operatorv1alpha1.SetupVersion, members []Observed) *operatorv1alpha1.SetupVersion {
	v := &operatorv1alpha1.SetupVersion{Current: Lowest(members, version), Target: version}
	if prev != nil {
		v.NextWindowStart, v.NextWindowVersion = prev.NextWindowStart, prev.NextWindowVersion
	}
	for _, m := range members {
		desired := m.Running
		if desired == "" {
			desired = version
		}
		v.Components = append(v.Components, operatorv1alpha1.ComponentVersion{Kind: m.Kind, Name: m.Name, Desired: desired})
	}
	return v
}

// Lowest is the lowest release the unpinned members run, def when none runs one.
func Lowest(members []Observed, def string) string {
	lowest := ""
	for _, m := range members {
		if m.Pinned != "" || m.Running == "" {
			continue
		}
		if lowest == "" || !kcpversion.FromTag(m.Running).AtLeast(kcpversion.FromTag(lowest)) {
			lowest = m.Running
		}
	}
	if lowest == "" {
		return def
	}
	return lowest
}

// components are the members as status.version.components records them, in the order of
// their groups, then by kind and name: desired as recorded, else the release Tag gives a
// member not recorded yet; a pinned member's desired is its own tag; running is what its
// Deployment runs once rolled out.
func components(v *operatorv1alpha1.SetupVersion, members []Observed) []operatorv1alpha1.ComponentVersion {
	rs := &operatorv1alpha1.RootShard{Spec: operatorv1alpha1.RootShardSpec{Version: v.Target}, Status: operatorv1alpha1.RootShardStatus{Version: v}}
	sorted := append([]Observed(nil), members...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if Index(a.Group) != Index(b.Group) {
			return Index(a.Group) < Index(b.Group)
		}
		return a.Kind < b.Kind || a.Kind == b.Kind && a.Name < b.Name
	})
	out := make([]operatorv1alpha1.ComponentVersion, 0, len(sorted))
	for _, m := range sorted {
		c := operatorv1alpha1.ComponentVersion{Kind: m.Kind, Name: m.Name, Desired: Tag(rs, m.Member), Pinned: m.Pinned != ""}
		if m.RolledOut {
			c.Running = m.Running
		}
		out = append(out, c)
	}
	return out
}

// give sets desired to the target on every unpinned member of the rolling group.
func give(v *operatorv1alpha1.SetupVersion) {
	for i := range v.Components {
		c := &v.Components[i]
		if !c.Pinned && groupOf(c.Kind) == v.Group {
			c.Desired = v.Target
		}
	}
}

// nextGroup is the first group after the one at index after that has work: an unpinned
// member whose desired is not the target; "" when none has.
func nextGroup(v *operatorv1alpha1.SetupVersion, after int) operatorv1alpha1.UpgradeGroup {
	for _, g := range Order[after+1:] {
		for _, c := range v.Components {
			if !c.Pinned && groupOf(c.Kind) == g && c.Desired != v.Target {
				return g
			}
		}
	}
	return ""
}

// waiting is the first unpinned member of the rolling group that is not rolled out at the
// target and ready, and why; done when there is none.
func waiting(v *operatorv1alpha1.SetupVersion, members []Observed) (who, why string, done bool) {
	for _, c := range v.Components {
		if c.Pinned || groupOf(c.Kind) != v.Group {
			continue
		}
		for _, m := range members {
			if m.Kind != c.Kind || m.Name != c.Name {
				continue
			}
			if ok, why := m.ready(v.Target); !ok {
				return m.Kind + "/" + m.Name, why, false
			}
		}
	}
	return "", "", true
}

// groupOf is the group of the components of a kind: each kind is its own group.
func groupOf(kind string) operatorv1alpha1.UpgradeGroup { return operatorv1alpha1.UpgradeGroup(kind) }
