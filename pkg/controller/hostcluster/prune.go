package hostcluster

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// PruneOwned deletes the Certificates and Secrets the controllers wrote for the object name
// of kind that keep does not name: what its spec no longer asks for, such as an identity
// replaced by the user's own, whose key must not linger. It reads the caches and returns how
// many objects it deleted; a Certificate goes before its Secret, so that cert-manager does
// not issue it again.
func (h *Host) PruneOwned(ctx context.Context, namespace, kind, name string, keep []string) (int, error) {
	selector := labels.SelectorFromSet(labels.Set{pki.LabelManagedBy: pki.ManagedBy, pki.OwnerLabel(kind): name})
	deleted := 0
	certs, err := h.Certificates.Certificates(namespace).List(selector)
	if err != nil {
		return 0, err
	}
	owner, marked := OwnerFrom(ctx)
	// theirs: what carries another object's UID, although its labels name this one.
	theirs := func(o metav1.Object) bool {
		return marked && owner.Kind == kind && owner.Name == name && !markedFor(o, owner.UID)
	}
	for _, cert := range certs {
		if slices.Contains(keep, cert.Name) || theirs(cert) {
			continue
		}
		err := h.CertManager.CertmanagerV1().Certificates(namespace).Delete(ctx, cert.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return deleted, fmt.Errorf("deleting the Certificate %s: %w", cert.Name, err)
		}
		deleted++
	}
	secrets, err := h.Secrets.Secrets(namespace).List(selector)
	if err != nil {
		return deleted, err
	}
	for _, secret := range secrets {
		// cert-manager's own key Secret of an issuance in flight is its to remove.
		if slices.Contains(keep, secret.Name) || secret.Labels["cert-manager.io/next-private-key"] != "" || theirs(secret) {
			continue
		}
		err := h.Kube.CoreV1().Secrets(namespace).Delete(ctx, secret.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return deleted, fmt.Errorf("deleting the Secret %s: %w", secret.Name, err)
		}
		deleted++
	}
	return deleted, nil
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
	// DeleteEtcdClaims).
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
