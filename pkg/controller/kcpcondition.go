package controller

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
)

// healthCondition is a condition that Host.KcpHealth polls for: KcpReady from kcp, EtcdReady
// from a managed etcd.
type healthCondition struct {
	// Type is the condition's type; the poller's keys are prefixed with it.
	Type string
	// Waiting is the condition while the component is not asked (its workload is not ready).
	Waiting kcphealth.Result
	// NotAskedReasons are the other reasons the condition has while the component is not
	// asked: a status with one of them is no answer to keep while the first check runs.
	NotAskedReasons []string
	// Checking is the condition while the first answer is awaited.
	Checking kcphealth.Result
	// Unreachable is the reason whose message varies from one attempt to the next (a
	// timeout's wording, a local port): the first one stands until the component answers,
	// lest each poll write.
	Unreachable string
	// EventReason names an Event of a failure whose reason alone would not say of what.
	EventReason func(reason string) string
	// Asking says in words what a check asks, for the condition's message when nothing can
	// be asked (NoKcpDialer).
	Asking string
	// NoDialer says whether the server is told that the component cannot be reached.
	NoDialer func(*hostcluster.Host) bool
}

var kcpReadyCondition = healthCondition{
	Type: operatorv1alpha1.ConditionKcpReady,
	Waiting: kcphealth.Result{Status: metav1.ConditionUnknown, Reason: operatorv1alpha1.ReasonWaitingForDeployment,
		Message: "kcp is asked once its Deployment is available"},
	Checking:    kcphealth.Result{Status: metav1.ConditionUnknown, Reason: operatorv1alpha1.ReasonKcpChecking, Message: "asking kcp whether it is ready"},
	Unreachable: operatorv1alpha1.ReasonKcpUnreachable,
	Asking:      "asking kcp whether it is ready",
	NoDialer:    func(h *hostcluster.Host) bool { return h.NoKcpDialer },
	EventReason: func(reason string) string {
		if reason == operatorv1alpha1.ReasonKcpNotReady {
			return "KcpNotReady" // "NotReady" alone would not say of what, in a list of Events
		}
		return reason
	},
}

// ObserveKcp sets obj's KcpReady condition from Host.KcpHealth, after the host-side
// reconcile: kcp is asked only while the Deployment is available, at most once an interval,
// in the background, and loop gets the key back when the next check is due or a check ended.
// Nothing here fails the reconcile: what kcp answers is a condition, never an error, since
// Synced is about the host's writes. An Event says when KcpReady changes.
func (l Lifecycle[T, S]) ObserveKcp(ctx context.Context, obj T, status *S, loop *Loop, deploymentAvailable bool, probe func(context.Context) kcphealth.Result) {
	l.observeHealth(ctx, obj, status, loop, kcpReadyCondition, nil, deploymentAvailable, probe)
}

// observeHealth sets obj's condition c from Host.KcpHealth. Without asking, while ask is
// false, it is notAsked, or c.Waiting when that is nil.
func (l Lifecycle[T, S]) observeHealth(ctx context.Context, obj T, status *S, loop *Loop, c healthCondition, notAsked *kcphealth.Result, ask bool, probe func(context.Context) kcphealth.Result) {
	h := l.Host.KcpHealth
	if l.Host.Kcp == nil || h == nil {
		return
	}
	queueKey := obj.GetNamespace() + "/" + obj.GetName()
	key := c.Type + "/" + l.Name + "/" + queueKey
	if !ask {
		// The workload's events bring the key back once it is ready; a result from before
		// then would be stale.
		h.Forget(key)
		r := c.Waiting
		if notAsked != nil {
			r = *notAsked
		}
		l.setHealth(obj, status, c, r)
		return
	}
	if c.NoDialer(l.Host) {
		// Nothing to poll: every check would fail the same way, at once.
		h.Forget(key)
		l.setHealth(obj, status, c, kcphealth.NoDialer(c.Asking))
		return
	}
	result, after := h.Observe(ctx, key, probe, func() {
		if loop != nil {
			loop.Queue.Add(queueKey)
		}
	})
	if after > 0 && loop != nil {
		loop.Queue.AddAfter(queueKey, after)
	}
	if result != nil {
		l.setHealth(obj, status, c, *result)
		return
	}
	// The first check is running: what the status says stays until it ends, lest the
	// condition flap through Checking on every restart of the server.
	if current := meta.FindStatusCondition(*l.Common(status).Conditions, c.Type); current != nil &&
		current.Reason != c.Waiting.Reason && !slices.Contains(c.NotAskedReasons, current.Reason) {
		l.setHealth(obj, status, c, kcphealth.Result{Status: current.Status, Reason: current.Reason, Message: current.Message})
		return
	}
	l.setHealth(obj, status, c, c.Checking)
}

// setHealth sets condition c to r, and says so in an Event when an answer changed it.
func (l Lifecycle[T, S]) setHealth(obj T, status *S, c healthCondition, r kcphealth.Result) {
	before := meta.FindStatusCondition(*l.Common(l.Status(obj)).Conditions, c.Type)
	same := before != nil && before.Status == r.Status && before.Reason == r.Reason
	if same && r.Reason == c.Unreachable {
		r.Message = before.Message
	}
	l.SetCondition(obj, status, c.Type, r.Status, r.Reason, r.Message)
	if same || r.Status == metav1.ConditionUnknown {
		return
	}
	if r.Status == metav1.ConditionTrue {
		l.Recorder.Event(obj, corev1.EventTypeNormal, c.Type, r.Message)
		return
	}
	reason := r.Reason
	if c.EventReason != nil {
		reason = c.EventReason(reason)
	}
	l.Recorder.Event(obj, corev1.EventTypeWarning, reason, r.Message)
}
