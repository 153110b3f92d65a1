package controller

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// SetCondition sets a condition, keeping its transition time when its status is unchanged.
func SetCondition(conditions *[]metav1.Condition, generation int64, t string, s metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(conditions, metav1.Condition{
		Type: t, Status: s, Reason: reason, Message: message, ObservedGeneration: generation,
	})
}

// SetCertificatesReady sets CertificatesReady from the certificates not issued yet.
func SetCertificatesReady(conditions *[]metav1.Condition, generation int64, total int, pending []string) {
	if len(pending) == 0 {
		SetCondition(conditions, generation, operatorv1alpha1.ConditionCertificatesReady, metav1.ConditionTrue, operatorv1alpha1.ReasonCertificatesIssued,
			fmt.Sprintf("all %d certificates are issued", total))
		return
	}
	// Counted and named: when cert-manager's controller is down, this is all there is to see.
	SetCondition(conditions, generation, operatorv1alpha1.ConditionCertificatesReady, metav1.ConditionFalse, operatorv1alpha1.ReasonCertificatesPending,
		fmt.Sprintf("%d of %d certificates are not Ready, waiting for cert-manager to issue them: %s", len(pending), total, summarize(pending)))
}

// Phase is Running once Available and CertificatesReady are both True, else Provisioning.
func Phase(conditions []metav1.Condition) operatorv1alpha1.Phase {
	if meta.IsStatusConditionTrue(conditions, operatorv1alpha1.ConditionAvailable) &&
		meta.IsStatusConditionTrue(conditions, operatorv1alpha1.ConditionCertificatesReady) {
		return operatorv1alpha1.PhaseRunning
	}
	return operatorv1alpha1.PhaseProvisioning
}

// summarize names up to five items and counts the rest.
func summarize(items []string) string {
	sort.Strings(items)
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:5], ", "), len(items)-5)
}

// SetReferenceMissing sets the conditions of an object that waits for the object it refers
// to, named by what: nothing of it can be issued or run before that exists.
func SetReferenceMissing(conditions *[]metav1.Condition, generation int64, reason, message, what string) {
	SetCondition(conditions, generation, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionFalse, reason, message)
	SetCondition(conditions, generation, operatorv1alpha1.ConditionAvailable, metav1.ConditionFalse, reason, "waiting for the "+what)
	SetCondition(conditions, generation, operatorv1alpha1.ConditionCertificatesReady, metav1.ConditionFalse, reason, "waiting for the "+what+"'s CAs")
}
