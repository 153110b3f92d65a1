package controller

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// SetVirtualWorkspaceMissing sets ReferenceValid=False for a root shard or shard whose
// VirtualWorkspace cannot serve it. Its kcp server is not rolled to or away from it until it
// can: the VirtualWorkspace's informer event brings the object back.
func (l Lifecycle[T, S]) SetVirtualWorkspaceMissing(obj T, status *S, reason, message string) {
	before := l.Common(l.Status(obj)).Conditions
	l.SetCondition(obj, status, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionFalse, reason, message)
	if c := meta.FindStatusCondition(*before, operatorv1alpha1.ConditionReferenceValid); c == nil || c.Reason != reason {
		l.Recorder.Event(obj, "Warning", reason, message)
	}
}
