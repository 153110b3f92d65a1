package rootshard

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/upgrade"
)

// EventUpgradeHalted is the reason of the Warning Event of a roll that halted.
const EventUpgradeHalted = "UpgradeHalted"

// roll takes a step of the roll of rs's setup to its spec.version (docs/kcp-versions.md,
// "Upgrading a setup"): status.version and the Upgrading condition, from its members as the
// caches and status (rs's own conditions, as observed just now) see them. Its members'
// controllers build what status.version gives them (kinds.Release.Built); their events bring
// rs back, and a group's deadline does too.
func (c *Controller) roll(rs *operatorv1alpha1.RootShard, status *operatorv1alpha1.RootShardStatus) {
	var members []upgrade.Observed
	if rs.Spec.Version != "" {
		members = c.members(rs, status.Conditions)
	}
	r := upgrade.Step(rs.Spec.Version, status.Version, rs.Spec.Upgrade, members, c.clock())
	status.Version = r.Version
	if r.Condition == nil {
		meta.RemoveStatusCondition(&status.Conditions, operatorv1alpha1.ConditionUpgrading)
		return
	}
	was := meta.FindStatusCondition(rs.Status.Conditions, operatorv1alpha1.ConditionUpgrading)
	setCondition(status, rs, operatorv1alpha1.ConditionUpgrading, r.Condition.Status, r.Condition.Reason, r.Condition.Message)
	if !r.Halted {
		c.announced.Delete(rs.UID)
	} else if halt := haltOf(r.Version); was == nil || was.Reason != operatorv1alpha1.ReasonUpgradeHalted {
		if prev, seen := c.announced.Swap(rs.UID, halt); !seen || prev != halt {
			c.Recorder.Event(rs, "Warning", EventUpgradeHalted, r.Condition.Message)
		}
	}
	if !r.Requeue.IsZero() && c.Loop != nil {
		c.Loop.Queue.AddAfter(rs.Namespace+"/"+rs.Name, r.Requeue.Sub(c.clock())+time.Second)
	}
}

// haltOf names a halt of a roll: its target, the group that halted and when it started.
func haltOf(v *operatorv1alpha1.SetupVersion) string {
	if v == nil {
		return ""
	}
	start := ""
	if v.GroupStartTime != nil {
		start = v.GroupStartTime.UTC().Format(time.RFC3339)
	}
	return v.Target + "/" + string(v.Group) + "/" + start
}

// clock is the time the roll reads: now, or a test's.
func (c *Controller) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// members are the components of rs's setup, observed (docs/kcp-versions.md, "Who follows the
// setup"): rs with its own conditions, the CacheServer its spec.cache.ref names when rs alone
// of the versioned RootShards names it, its local Shards, the kcp VirtualWorkspaces that
// serve it or one of them, and its FrontProxies.
func (c *Controller) members(rs *operatorv1alpha1.RootShard, conditions []metav1.Condition) []upgrade.Observed {
	x, ns := c.Indexes, rs.Namespace
	out := []upgrade.Observed{c.observeMember(kinds.RootShardRelease.Member(c.Host.Deployments, rs), ns, kinds.RootShardRelease.Deployments(rs), conditions)}
	if ref := rs.Spec.Cache; ref != nil && ref.Reference != nil {
		if cs, err := kinds.CacheServer.Lister(x, ns).Get(ref.Reference.Name); err == nil && kinds.CacheServerRelease.Setup(x, cs) == rs.Name {
			out = append(out, member(c, kinds.CacheServer, kinds.CacheServerRelease, cs))
		}
	}
	for _, s := range kinds.ShardsOf(x, ns, rs.Name) {
		out = append(out, member(c, kinds.Shard, kinds.ShardRelease, s))
	}
	for _, vw := range kinds.VirtualWorkspacesOf(x, ns, rs.Name) {
		if kinds.VirtualWorkspaceSetup(x, vw) == rs.Name {
			out = append(out, member(c, kinds.VirtualWorkspace, kinds.VirtualWorkspaceRelease, vw))
		}
	}
	for _, fp := range kinds.FrontProxiesOf(x, ns, rs.Name) {
		out = append(out, member(c, kinds.FrontProxy, kinds.FrontProxyRelease, fp))
	}
	return out
}

// member is obj of kind, a member of a setup, observed from its Deployments and its status.
func member[T controller.Object, S any](c *Controller, kind controller.Kind[T, S], r kinds.Release[T], obj T) upgrade.Observed {
	return c.observeMember(r.Member(c.Host.Deployments, obj), obj.GetNamespace(), r.Deployments(obj), *kind.Common(kind.Status(obj)).Conditions)
}

// observeMember is m observed: rolled out when each of its Deployments is rolled out and runs
// what the first runs, ready when its Available condition is True and its KcpReady is not
// False.
func (c *Controller) observeMember(m upgrade.Member, namespace string, deployments []string, conditions []metav1.Condition) upgrade.Observed {
	o := upgrade.Observed{Member: m, RolledOut: true}
	for _, name := range deployments {
		available, _, message := c.Host.DeploymentAvailable(namespace, name)
		if available != metav1.ConditionTrue {
			o.RolledOut, o.Rollout = false, fmt.Sprintf("Deployment %s: %s", name, message)
			break
		}
		if tag := kinds.RunningTag(c.Host.Deployments, namespace, name); tag != m.Running {
			o.RolledOut, o.Rollout = false, fmt.Sprintf("Deployment %s runs %s", name, tag)
			break
		}
	}
	o.NotReady = notReady(conditions)
	return o
}

// notReady says why a member whose conditions are these is not ready, "" when it is: its
// Available is not True, or kcp answered that it is not ready (KcpReady False, reason
// NotReady or ShardNotRegistered). A kcp the server does not reach (KcpUnreachable,
// KcpRefused, WaitingForCredentials, or Unknown with --kcp-dialer=none) holds nothing:
// Available, its pods' readiness on kcp's /readyz, says it serves.
func notReady(conditions []metav1.Condition) string {
	if a := meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionAvailable); a == nil || a.Status != metav1.ConditionTrue {
		if a == nil {
			return "Available is not reported yet"
		}
		return fmt.Sprintf("Available=%s, %s: %s", a.Status, a.Reason, a.Message)
	}
	if k := meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionKcpReady); k != nil && k.Status == metav1.ConditionFalse &&
		(k.Reason == operatorv1alpha1.ReasonKcpNotReady || k.Reason == operatorv1alpha1.ReasonShardNotRegistered) {
		return fmt.Sprintf("KcpReady=False, %s: %s", k.Reason, k.Message)
	}
	return ""
}

// ofMemberDeployment are the versioned RootShards of a Deployment's namespace, whose roll
// may wait for it, when m is a Deployment of another kind's object: a member's rollout moves
// its setup's roll on (its own status may not change while it rolls).
func (c *Controller) ofMemberDeployment(m metav1.Object) []string {
	if _, ok := m.(*appsv1.Deployment); !ok || controller.OwnerKey(m, kinds.RootShard.Name) != nil {
		return nil
	}
	all, err := kinds.RootShard.Lister(c.Indexes, m.GetNamespace()).List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []string
	for _, rs := range all {
		if rs.Spec.Version != "" {
			keys = append(keys, rs.Namespace+"/"+rs.Name)
		}
	}
	return keys
}
