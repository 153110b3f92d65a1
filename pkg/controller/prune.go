package controller

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
