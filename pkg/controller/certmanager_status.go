package controller

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
)

// CertManagerNotInstalledMessage says what is missing and what to do.
var CertManagerNotInstalledMessage = hostcluster.CertManagerGroupVersion + " is not served by the host cluster; install cert-manager"

// SetCertManagerNotInstalled sets the conditions of an object while cert-manager is not
// installed. An Available condition already there is left alone: what runs keeps running.
func SetCertManagerNotInstalled(conditions *[]metav1.Condition, generation int64) {
	SetCondition(conditions, generation, operatorv1alpha1.ConditionCertificatesReady, metav1.ConditionFalse,
		operatorv1alpha1.ReasonCertManagerNotInstalled, CertManagerNotInstalledMessage)
	if meta.FindStatusCondition(*conditions, operatorv1alpha1.ConditionAvailable) == nil {
		SetCondition(conditions, generation, operatorv1alpha1.ConditionAvailable, metav1.ConditionFalse,
			operatorv1alpha1.ReasonCertManagerNotInstalled, "waiting for cert-manager to be installed")
	}
}

// RequiringCertManager is reconcile, run only while cert-manager's API is served. Until
// then the object says so in its status, and in an Event when that changes; nothing is
// retried, since the tracker enqueues every object again when the API appears.
func (l Lifecycle[T, S]) RequiringCertManager(reconcile func(ctx context.Context, obj T, status *S) error) func(ctx context.Context, obj T, status *S) error {
	return func(ctx context.Context, obj T, status *S) error {
		if l.Host.CertManagerReady() {
			return reconcile(ctx, obj, status)
		}
		common := l.Common(status)
		SetCertManagerNotInstalled(common.Conditions, obj.GetGeneration())
		if common.Phase != nil {
			*common.Phase = Phase(*common.Conditions)
		}
		if !apiequality.Semantic.DeepEqual(l.Status(obj), status) {
			l.Recorder.Event(obj, "Warning", operatorv1alpha1.ReasonCertManagerNotInstalled, CertManagerNotInstalledMessage)
		}
		return nil
	}
}
