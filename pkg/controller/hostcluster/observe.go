package hostcluster

import (
	"fmt"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// ServerAvailable is the Available condition of a kcp server (a root shard's or a shard's).
func (h *Host) ServerAvailable(s kcp.Server) (metav1.ConditionStatus, string, string) {
	return h.DeploymentAvailable(s.Namespace, s.DeploymentName())
}

// DeploymentAvailable is the Available condition of a component: its Deployment has rolled
// out, and its updated, ready and desired replica counts agree.
func (h *Host) DeploymentAvailable(namespace, name string) (metav1.ConditionStatus, string, string) {
	d, err := h.Deployments.Deployments(namespace).Get(name)
	if err != nil {
		return metav1.ConditionFalse, operatorv1alpha1.ReasonDeploymentNotFound, fmt.Sprintf("the Deployment %s does not exist yet", name)
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	if st.ObservedGeneration < d.Generation || st.UpdatedReplicas != want || st.ReadyReplicas != want || st.AvailableReplicas != want || st.Replicas != want {
		return metav1.ConditionFalse, operatorv1alpha1.ReasonReplicasUnavailable,
			fmt.Sprintf("%d of %d replicas are updated and ready", min(st.UpdatedReplicas, st.ReadyReplicas), want)
	}
	return metav1.ConditionTrue, operatorv1alpha1.ReasonReplicasAvailable, fmt.Sprintf("%d of %d replicas are updated and ready", want, want)
}

// PendingCertificates are the names of the certificates not issued yet.
func (h *Host) PendingCertificates(certs []*cmapply.CertificateApplyConfiguration) []string {
	var pending []string
	for _, want := range certs {
		cert, err := h.Certificates.Certificates(*want.Namespace).Get(*want.Name)
		if err != nil || !certificateReady(cert) {
			pending = append(pending, *want.Name)
		}
	}
	return pending
}

// certificateReady reports whether a Certificate has been issued and is current.
func certificateReady(cert *cmv1.Certificate) bool {
	for _, cond := range cert.Status.Conditions {
		if cond.Type == cmv1.CertificateConditionReady {
			return cond.Status == "True"
		}
	}
	return false
}
