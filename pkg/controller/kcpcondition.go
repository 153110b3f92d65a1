package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// ObserveKcp sets obj's KcpReady condition from Host.KcpHealth, after the host-side
// reconcile: kcp is asked only while the Deployment is available, at most once an interval,
// in the background, and loop gets the key back when the next check is due or a check ended.
// Nothing here fails the reconcile: what kcp answers is a condition, never an error, since
// Synced is about the host's writes. An Event says when KcpReady changes.
func (l Lifecycle[T, S]) ObserveKcp(ctx context.Context, obj T, status *S, loop *Loop, deploymentAvailable bool, probe func(context.Context) KcpResult) {
	h := l.Host.KcpHealth
	if l.Host.Kcp == nil || h == nil {
		return
	}
	queueKey := obj.GetNamespace() + "/" + obj.GetName()
	key := l.Kind + "/" + queueKey
	if !deploymentAvailable {
		// The Deployment's events bring the key back once it is available; a result from
		// before then would be stale.
		h.Forget(key)
		l.setKcpReady(obj, status, KcpResult{metav1.ConditionUnknown, operatorv1alpha1.ReasonWaitingForDeployment,
			"kcp is asked once its Deployment is available"})
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
		l.setKcpReady(obj, status, *result)
		return
	}
	// The first check is running: what the status says stays until it ends, lest the
	// condition flap through Checking on every restart of the server.
	if current := meta.FindStatusCondition(*l.Common(status).Conditions, operatorv1alpha1.ConditionKcpReady); current != nil &&
		current.Reason != operatorv1alpha1.ReasonWaitingForDeployment {
		l.setKcpReady(obj, status, KcpResult{current.Status, current.Reason, current.Message})
		return
	}
	l.setKcpReady(obj, status, KcpResult{metav1.ConditionUnknown, operatorv1alpha1.ReasonKcpChecking, "asking kcp whether it is ready"})
}

// setKcpReady sets KcpReady to r, and says so in an Event when kcp's answer changed it.
func (l Lifecycle[T, S]) setKcpReady(obj T, status *S, r KcpResult) {
	before := meta.FindStatusCondition(*l.Common(l.Status(obj)).Conditions, operatorv1alpha1.ConditionKcpReady)
	same := before != nil && before.Status == r.Status && before.Reason == r.Reason
	if same && r.Reason == operatorv1alpha1.ReasonKcpUnreachable {
		// A transport error's text varies from one attempt to the next (a timeout's wording,
		// a local port): the first one stands until kcp answers, lest each poll write.
		r.Message = before.Message
	}
	l.SetCondition(obj, status, operatorv1alpha1.ConditionKcpReady, r.Status, r.Reason, r.Message)
	if same || r.Reason == operatorv1alpha1.ReasonWaitingForDeployment || r.Reason == operatorv1alpha1.ReasonKcpChecking {
		return
	}
	if r.Status == metav1.ConditionTrue {
		l.Recorder.Event(obj, corev1.EventTypeNormal, "KcpReady", r.Message)
		return
	}
	reason := r.Reason
	if reason == operatorv1alpha1.ReasonKcpNotReady {
		reason = "KcpNotReady" // "NotReady" alone would not say of what, in a list of Events
	}
	l.Recorder.Event(obj, corev1.EventTypeWarning, reason, r.Message)
}
