package controller

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
)

// syncedMessage is the message of Synced=True.
const syncedMessage = "the last reconcile wrote what it had to to the host cluster"

// SetSynced sets Synced=True in status: the reconcile succeeded.
func (l Lifecycle[T, S]) SetSynced(obj T, status *S) {
	l.SetCondition(obj, status, operatorv1alpha1.ConditionSynced, metav1.ConditionTrue, operatorv1alpha1.ReasonReconciled, syncedMessage)
}

// markSynced sets Synced after a reconcile that returned no error: True, unless
// RequiringCertManager skipped it because cert-manager is missing, in which case nothing was
// written to the host cluster either.
func (l Lifecycle[T, S]) markSynced(obj T, status *S) {
	if l.Host != nil && l.Host.CertManagerAPI != nil && !l.Host.CertManagerReady() {
		l.SetCondition(obj, status, operatorv1alpha1.ConditionSynced, metav1.ConditionFalse, operatorv1alpha1.ReasonCertManagerNotInstalled, CertManagerNotInstalledMessage)
		return
	}
	l.SetSynced(obj, status)
}

// ReportFailure says why a reconcile of obj failed: a Warning Event, and Synced=False in its
// status, both with the failure's stable reason (FailureReason). The rest of the status is
// left as last observed: the reconcile that failed observed nothing. The status is written
// only when it changed, so that a failure that repeats writes once, and its informer event
// cannot defeat the queue's backoff.
func (l Lifecycle[T, S]) ReportFailure(ctx context.Context, obj T, err error) {
	reason, message := hostcluster.FailureReason(err), hostcluster.FailureMessage(err)
	l.Recorder.Event(obj, corev1.EventTypeWarning, reason, message)
	next := l.copy(obj)
	l.SetCondition(obj, l.Status(next), operatorv1alpha1.ConditionSynced, metav1.ConditionFalse, reason, message)
	if missing := (*hostcluster.MissingCABundleError)(nil); errors.As(err, &missing) {
		// Not the host's refusal but the user's reference: the condition about references
		// says it, as for every other missing reference.
		l.SetCondition(obj, l.Status(next), operatorv1alpha1.ConditionReferenceValid, metav1.ConditionFalse, reason, missing.Error())
	}
	if _, werr := l.writeStatus(ctx, obj, next); werr != nil && !apierrors.IsConflict(werr) {
		// The failure itself is logged and retried by the Loop; this is only its report.
		klog.FromContext(ctx).V(2).Info("Could not report a failed reconcile in the status", "reason", reason, "err", werr)
	}
}
