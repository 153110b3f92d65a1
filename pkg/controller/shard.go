package controller

import (
	"context"
	"fmt"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// The reasons of the Available condition. They are part of the API: keep them stable.
const (
	ReasonDeploymentNotFound  = "DeploymentNotFound"
	ReasonReplicasUnavailable = "ReplicasUnavailable"
	ReasonReplicasAvailable   = "ReplicasAvailable"
)

// ApplyCertificates applies Issuers and Certificates, has the leaves whose CA changed since
// they were issued issued again (ReissueStaleLeaves), and returns how many it wrote.
func (h *Host) ApplyCertificates(ctx context.Context, issuers []*cmapply.IssuerApplyConfiguration, certs []*cmapply.CertificateApplyConfiguration) (int, error) {
	wrote := 0
	for _, issuer := range issuers {
		w, err := h.IssuerApplier.ApplyIfChanged(ctx, issuer)
		if err != nil {
			return wrote, err
		}
		wrote += Count(w)
	}
	for _, cert := range certs {
		w, err := h.CertificateApplier.ApplyIfChanged(ctx, cert)
		if err != nil {
			return wrote, err
		}
		wrote += Count(w)
	}
	n, err := h.ReissueStaleLeaves(ctx, issuers, certs)
	return wrote + n, err
}

// RealizeServer applies a kcp shard's admin kubeconfigs, Service, Deployment and its
// PodDisruptionBudget, and returns
// how many objects it wrote. The Deployment's pods roll when a Secret they mount changes.
func (h *Host) RealizeServer(ctx context.Context, s kcp.Server) (int, error) {
	wrote := 0
	for _, identity := range []string{kcp.LogicalClusterAdmin, kcp.ExternalLogicalClusterAdmin} {
		secret, err := s.AdminKubeconfig(identity)
		if err != nil {
			return wrote, err
		}
		w, err := h.SecretApplier.ApplyIfChanged(ctx, secret)
		if err != nil {
			return wrote, err
		}
		wrote += Count(w)
	}
	w, err := h.ServiceApplier.ApplyIfChanged(ctx, s.Service())
	if err != nil {
		return wrote, err
	}
	wrote += Count(w)

	if s.Spec.KcpVirtualWorkspace != nil && s.VirtualWorkspace == nil {
		// Its VirtualWorkspace cannot serve it yet: the Deployment is rolled neither to
		// in-process virtual workspaces nor to a server that is not there. The
		// VirtualWorkspace's event brings the shard back.
		return wrote, nil
	}
	etcdReady := true
	if s.Etcd != nil {
		n, sts, err := h.RealizeEtcd(ctx, s.Etcd)
		wrote += n
		if err != nil {
			return wrote, err
		}
		etcdReady = sts != nil
		if etcdReady {
			etcdReady, _, _ = StatefulSetReady(sts)
		}
	}
	current, err := h.Deployments.Deployments(s.Namespace).Get(s.DeploymentName())
	if apierrors.IsNotFound(err) {
		current, err = nil, nil
	}
	if err != nil {
		return wrote, err
	}
	versions := h.MountedVersions(s.Namespace, s.MountedSecrets())
	if current == nil {
		// Created before its Secrets, the Deployment would roll once per Secret issued;
		// their events bring the shard back when they exist. Created before its managed
		// etcd has every member ready, kcp would crash-loop until it has; the
		// StatefulSet's events bring the shard back.
		if !etcdReady {
			return wrote, nil
		}
		for _, name := range s.RealizedSecrets() {
			if _, ok := versions[name]; !ok {
				return wrote, nil
			}
		}
	}
	n, err := h.ApplyWorkload(ctx, s.Deployment(current, workload.SecretsHash(versions)))
	return wrote + n, err
}

// ServerAvailable is a shard's Available condition.
func (h *Host) ServerAvailable(s kcp.Server) (metav1.ConditionStatus, string, string) {
	return h.DeploymentAvailable(s.Namespace, s.DeploymentName())
}

// DeploymentAvailable is the Available condition of a component: its Deployment has rolled
// out, and its updated, ready and desired replica counts agree.
func (h *Host) DeploymentAvailable(namespace, name string) (metav1.ConditionStatus, string, string) {
	d, err := h.Deployments.Deployments(namespace).Get(name)
	if err != nil {
		return metav1.ConditionFalse, ReasonDeploymentNotFound, fmt.Sprintf("the Deployment %s does not exist yet", name)
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	if st.ObservedGeneration < d.Generation || st.UpdatedReplicas != want || st.ReadyReplicas != want || st.AvailableReplicas != want || st.Replicas != want {
		return metav1.ConditionFalse, ReasonReplicasUnavailable,
			fmt.Sprintf("%d of %d replicas are updated and ready", min(st.UpdatedReplicas, st.ReadyReplicas), want)
	}
	return metav1.ConditionTrue, ReasonReplicasAvailable, fmt.Sprintf("%d of %d replicas are updated and ready", want, want)
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

// DeleteOwned deletes what the controllers own in namespace by label selector: Deployments
// with their PodDisruptionBudgets and Services, then the Certificates, so that cert-manager does not issue their Secrets
// again, then the Issuers, the Secrets and the ConfigMaps.
func (h *Host) DeleteOwned(ctx context.Context, namespace, selector string) error {
	opts := metav1.ListOptions{LabelSelector: selector}
	background := metav1.DeletePropagationBackground
	if err := h.Kube.AppsV1().Deployments(namespace).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &background}, opts); err != nil {
		return fmt.Errorf("deleting Deployments %s: %w", selector, err)
	}
	// A managed etcd's pods go with its StatefulSet; its PersistentVolumeClaims stay (see
	// DeleteVolumeClaims).
	if err := h.Kube.AppsV1().StatefulSets(namespace).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &background}, opts); err != nil {
		return fmt.Errorf("deleting StatefulSets %s: %w", selector, err)
	}
	if err := h.Kube.PolicyV1().PodDisruptionBudgets(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, opts); err != nil {
		return fmt.Errorf("deleting PodDisruptionBudgets %s: %w", selector, err)
	}
	// Services have no deletecollection.
	services, err := h.Kube.CoreV1().Services(namespace).List(ctx, opts)
	if err != nil {
		return fmt.Errorf("listing Services %s: %w", selector, err)
	}
	for _, svc := range services.Items {
		if err := h.Kube.CoreV1().Services(namespace).Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Service %s: %w", svc.Name, err)
		}
	}
	// Without cert-manager's API (NotFound), there are no Certificates or Issuers to delete.
	cm := h.CertManager.CertmanagerV1()
	if err := cm.Certificates(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, opts); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Certificates %s: %w", selector, err)
	}
	if err := cm.Issuers(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, opts); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Issuers %s: %w", selector, err)
	}
	if err := h.Kube.CoreV1().Secrets(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, opts); err != nil {
		return fmt.Errorf("deleting Secrets %s: %w", selector, err)
	}
	if err := h.Kube.CoreV1().ConfigMaps(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, opts); err != nil {
		return fmt.Errorf("deleting ConfigMaps %s: %w", selector, err)
	}
	return nil
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

// Count is 1 for a write, 0 for none: for adding up what a reconcile wrote.
func Count(wrote bool) int {
	if wrote {
		return 1
	}
	return 0
}
