package etcdmaint

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
)

// The bounds of the work a Maintainer starts.
const (
	// ActionTimeout bounds one compaction or defragmentation.
	ActionTimeout = 10 * time.Minute
	// healthyTimeout bounds the wait for a defragmented member to be healthy again.
	healthyTimeout = 2 * time.Minute
	// forgetAfter drops the state of a cluster not observed for that long (its owner is gone).
	forgetAfter = time.Hour
)

// Target is a managed etcd a round asks: its client Service and each member's own endpoint.
type Target struct {
	// Cluster reaches any member, through the client Service.
	Cluster kcphealth.Config
	// Members reach each member by itself, by pod name.
	Members []MemberTarget
	Policy  Policy
	// Done is called when work the round started ends: the owner is reconciled again.
	Done func()
}

// MemberTarget is one member's own endpoint.
type MemberTarget struct {
	Name   string
	Config kcphealth.Config
}

// Event is what an owner's reconcile tells in an Event.
type Event struct {
	Type, Reason, Message string
}

// Observed is what the server knows of a managed etcd for its owner's status.
type Observed struct {
	// Members are the members as the last round saw them, by name; nil before one.
	Members []Member
	Alarms  []Alarm
	// Defragmented is when the server last defragmented each member, by name.
	Defragmented map[string]time.Time
}

// Maintainer asks managed etcds how they are and keeps them in shape, as the Poller's
// rounds call Round: at most one maintenance action runs per cluster at a time, whichever
// worker's round started it, and it runs apart from the rounds, which stay bounded.
type Maintainer struct {
	mu       sync.Mutex
	clusters map[string]*cluster
	running  sync.WaitGroup
	now      func() time.Time
}

type cluster struct {
	observed Observed
	seen     time.Time
	// busy says an action runs; stuck is the quota a NOSPACE recovery could not get under.
	busy  bool
	stuck int64
	// events wait for the owner's reconcile.
	events []Event
}

// NewMaintainer returns a Maintainer with no cluster known.
func NewMaintainer() *Maintainer {
	return &Maintainer{clusters: map[string]*cluster{}, now: time.Now}
}

// Wait waits for the actions that run: for tests.
func (m *Maintainer) Wait() { m.running.Wait() }

// Round asks the cluster of key how it is, under ctx (the Poller's bounded check), starts
// the next maintenance action in the background under life (the controllers' lifetime) when
// one is due and none runs, and returns the EtcdReady result: etcd's /health, unless an
// alarm is raised.
func (m *Maintainer) Round(life, ctx context.Context, key string, t Target) kcphealth.Result {
	// A cluster that does not answer /health at all (no member runs, or none can be reached)
	// is asked nothing more: one request a round, as EtcdReady alone asks. What its members
	// said last stays observed.
	result := kcphealth.Etcd(ctx, t.Cluster)
	if result.Reason == operatorv1alpha1.ReasonEtcdUnreachable || result.Reason == operatorv1alpha1.ReasonWaitingForCredentials {
		return result
	}
	members := make([]Member, len(t.Members))
	var wg sync.WaitGroup
	for i, mt := range t.Members {
		wg.Go(func() {
			members[i] = Member{Name: mt.Name}
			s, err := MemberStatus(ctx, mt.Config)
			if err != nil {
				members[i].Err = err.Error()
				return
			}
			members[i].Status = s
		})
	}
	alarms, alarmsErr := Alarms(ctx, t.Cluster)
	wg.Wait()
	if alarmsErr != nil {
		// Without the alarm list, nothing is known of alarms: nothing is started.
		alarms = nil
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep()
	c := m.clusters[key]
	if c == nil {
		c = &cluster{}
		m.clusters[key] = c
	}
	c.seen = m.now()
	c.observed.Members, c.observed.Alarms = members, alarms
	if !HasAlarm(alarms, AlarmNoSpace) {
		c.stuck = 0
	}
	if r, ok := AlarmResult(members, alarms); ok {
		result = r
	}
	if alarmsErr != nil || c.busy {
		return result
	}
	a := Next(members, alarms, t.Policy, c.stuck)
	if a.Kind != DefragmentOne && a.Kind != Recover {
		return result
	}
	c.busy = true
	m.running.Add(1)
	go m.run(life, c, t, a, members, alarms)
	return result
}

// Observed is what is known of the cluster of key, and the Events that wait to be told,
// which it hands over.
func (m *Maintainer) Observed(key string) (Observed, []Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.clusters[key]
	if c == nil {
		return Observed{}, nil
	}
	events := c.events
	c.events = nil
	o := c.observed
	o.Members = slices.Clone(o.Members)
	o.Alarms = slices.Clone(o.Alarms)
	o.Defragmented = make(map[string]time.Time, len(c.observed.Defragmented))
	for k, v := range c.observed.Defragmented {
		o.Defragmented[k] = v
	}
	return o, events
}

// AlarmResult is the EtcdReady condition of raised alarms, CORRUPT first, naming the members
// that raised them; false without one.
func AlarmResult(members []Member, alarms []Alarm) (kcphealth.Result, bool) {
	for _, a := range []struct{ alarm, reason, what string }{
		{AlarmCorrupt, operatorv1alpha1.ReasonAlarmCorrupt, "a corrupted member needs a human: the server never disarms CORRUPT (docs/etcd.md)"},
		{AlarmNoSpace, operatorv1alpha1.ReasonAlarmNoSpace, "the database reached the quota and etcd refuses writes: the server compacts, defragments the members one at a time and disarms it"},
	} {
		var on []string
		for _, raised := range alarms {
			if raised.Type == a.alarm {
				on = append(on, MemberName(members, raised.MemberID))
			}
		}
		if len(on) > 0 {
			slices.Sort(on)
			return kcphealth.Result{Status: metav1.ConditionFalse, Reason: a.reason,
				Message: fmt.Sprintf("etcd raised %s on member %s: %s", a.alarm, strings.Join(on, ", "), a.what)}, true
		}
	}
	return kcphealth.Result{}, false
}

// MemberName is the name of the member whose etcd ID is id, or the ID in hex when no member
// answered with it.
func MemberName(members []Member, id uint64) string {
	for _, m := range members {
		if m.Err == "" && m.MemberID == id {
			return m.Name
		}
	}
	return fmt.Sprintf("%x", id)
}

// run carries out a, then frees the cluster for the next action and tells its owner.
func (m *Maintainer) run(life context.Context, c *cluster, t Target, a Action, members []Member, alarms []Alarm) {
	defer m.running.Done()
	defer t.Done()
	defer func() {
		m.mu.Lock()
		c.busy = false
		m.mu.Unlock()
	}()
	logger := klog.FromContext(life)
	switch a.Kind {
	case DefragmentOne:
		if err := m.defragment(life, c, t, memberOf(members, a.Member)); err != nil {
			logger.Error(err, "defragmenting an etcd member", "member", a.Member)
		}
	case Recover:
		if err := m.recover(life, c, t, members, alarms); err != nil {
			logger.Error(err, "recovering etcd from NOSPACE")
		}
	}
}

// recover compacts the cluster at its current revision, defragments every member one at a
// time, followers first, and disarms NOSPACE once every member's database is below the quota.
func (m *Maintainer) recover(life context.Context, c *cluster, t Target, members []Member, alarms []Alarm) error {
	var revision int64
	for _, mem := range members {
		revision = max(revision, mem.Revision)
	}
	if err := Compact(life, t.Cluster, revision, ActionTimeout); err != nil {
		m.tell(c, Event{corev1.EventTypeWarning, "EtcdMaintenanceFailed", fmt.Sprintf("compacting etcd at revision %d after NOSPACE: %v", revision, err)})
		return err
	}
	for _, mem := range DefragmentationOrder(members) {
		if err := m.defragment(life, c, t, mem); err != nil {
			return err
		}
	}
	after := make([]Member, 0, len(t.Members))
	for _, mt := range t.Members {
		mem := Member{Name: mt.Name}
		s, err := MemberStatus(life, mt.Config)
		if err != nil {
			mem.Err = err.Error()
		}
		mem.Status = s
		after = append(after, mem)
	}
	if !Disarmable(after, t.Policy.Quota) {
		m.mu.Lock()
		c.stuck = t.Policy.Quota
		m.mu.Unlock()
		m.tell(c, Event{corev1.EventTypeWarning, "EtcdMaintenanceFailed", fmt.Sprintf(
			"etcd's NOSPACE stays: after compaction and defragmentation a member's database is not below the quota of %d bytes; raise spec.etcd.managed.quota", t.Policy.Quota)})
		return nil
	}
	var disarmed []string
	for _, a := range alarms {
		if a.Type != AlarmNoSpace {
			continue
		}
		if err := Disarm(life, t.Cluster, a.MemberID, AlarmNoSpace); err != nil {
			m.tell(c, Event{corev1.EventTypeWarning, "EtcdMaintenanceFailed", fmt.Sprintf("disarming NOSPACE: %v", err)})
			return err
		}
		disarmed = append(disarmed, MemberName(members, a.MemberID))
	}
	m.tell(c, Event{corev1.EventTypeNormal, "EtcdAlarmDisarmed", fmt.Sprintf(
		"disarmed NOSPACE on member %s: every member's database is below the quota of %d bytes", strings.Join(disarmed, ", "), t.Policy.Quota)})
	return nil
}

// defragment defragments one member and waits until it is healthy again, so that the next
// one is not defragmented while it is not back.
func (m *Maintainer) defragment(life context.Context, c *cluster, t Target, mem Member) error {
	config := memberConfig(t, mem.Name)
	if config == nil {
		return fmt.Errorf("no member %s", mem.Name)
	}
	start := m.now()
	if err := Defragment(life, config, ActionTimeout); err != nil {
		m.tell(c, Event{corev1.EventTypeWarning, "EtcdMaintenanceFailed", fmt.Sprintf("defragmenting member %s: %v", mem.Name, err)})
		return err
	}
	var after Status
	err := wait.PollUntilContextTimeout(life, time.Second, healthyTimeout, true, func(ctx context.Context) (bool, error) {
		if !Healthy(ctx, config) {
			return false, nil
		}
		s, err := MemberStatus(ctx, config)
		after = s
		return err == nil, nil
	})
	m.mu.Lock()
	if c.observed.Defragmented == nil {
		c.observed.Defragmented = map[string]time.Time{}
	}
	c.observed.Defragmented[mem.Name] = start
	m.mu.Unlock()
	if err != nil {
		m.tell(c, Event{corev1.EventTypeWarning, "EtcdMaintenanceFailed", fmt.Sprintf("member %s is not healthy after its defragmentation: %v", mem.Name, err)})
		return err
	}
	m.tell(c, Event{corev1.EventTypeNormal, "EtcdDefragmented", fmt.Sprintf(
		"defragmented member %s: database %d bytes (%d in use) before, %d bytes (%d in use) after",
		mem.Name, mem.DBSize, mem.DBSizeInUse, after.DBSize, after.DBSizeInUse)})
	return nil
}

// tell queues an Event for the owner's next reconcile.
func (m *Maintainer) tell(c *cluster, e Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c.events = append(c.events, e)
}

// sweep drops the clusters not observed for forgetAfter, whose owners are gone.
func (m *Maintainer) sweep() {
	now := m.now()
	for key, c := range m.clusters {
		if !c.busy && now.Sub(c.seen) > forgetAfter {
			delete(m.clusters, key)
		}
	}
}

func memberOf(members []Member, name string) Member {
	for _, mem := range members {
		if mem.Name == name {
			return mem
		}
	}
	return Member{Name: name}
}

func memberConfig(t Target, name string) kcphealth.Config {
	for _, mt := range t.Members {
		if mt.Name == name {
			return mt.Config
		}
	}
	return nil
}

// MemberStatuses is status.etcd.members from what is observed, given what the status says
// (current): a member that does not answer keeps what it reported, with the first error that
// stands until it answers; sizes are reported again only when they changed by SizeChanged,
// so that an idle etcd writes no status. Before the first round, current stands.
func MemberStatuses(current []operatorv1alpha1.EtcdMemberStatus, o Observed) []operatorv1alpha1.EtcdMemberStatus {
	if o.Members == nil {
		return current
	}
	var out []operatorv1alpha1.EtcdMemberStatus
	for _, m := range o.Members {
		next := operatorv1alpha1.EtcdMemberStatus{Name: m.Name}
		i := slices.IndexFunc(current, func(s operatorv1alpha1.EtcdMemberStatus) bool { return s.Name == m.Name })
		if i >= 0 {
			next = *current[i].DeepCopy()
		}
		if m.Err != "" {
			if next.Error == "" {
				next.Error = truncate(m.Err)
			}
		} else {
			next.Error, next.Leader = "", m.IsLeader()
			if i < 0 || SizeChanged(next.DatabaseSize, m.DBSize) || SizeChanged(next.DatabaseSizeInUse, m.DBSizeInUse) {
				next.DatabaseSize, next.DatabaseSizeInUse = m.DBSize, m.DBSizeInUse
			}
			next.Alarms = nil
			for _, a := range o.Alarms {
				if a.MemberID == m.MemberID && !slices.Contains(next.Alarms, a.Type) {
					next.Alarms = append(next.Alarms, a.Type)
				}
			}
			slices.Sort(next.Alarms)
		}
		if t, ok := o.Defragmented[m.Name]; ok {
			at := metav1.NewTime(t.UTC().Truncate(time.Second))
			next.LastDefragmentationTime = &at
		}
		out = append(out, next)
	}
	return out
}

// maxError bounds a member's error in status.
const maxError = 256

func truncate(s string) string {
	if len(s) <= maxError {
		return s
	}
	return strings.ToValidUTF8(s[:maxError-3], "") + "..."
}
