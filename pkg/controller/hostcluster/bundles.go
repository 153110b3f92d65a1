package hostcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UsersCABundle reads the tls.crt of a user's CA bundle Secret. The users' Secrets are not
// labelled as ours, so they are read, not cached; nil ref reads nothing.
func (h *Host) UsersCABundle(ctx context.Context, namespace string, ref *corev1.LocalObjectReference) ([]byte, error) {
	if ref == nil {
		return nil, nil
	}
	s, err := h.Kube.CoreV1().Secrets(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, &MissingCABundleError{Name: ref.Name}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the CA bundle Secret %s: %w", ref.Name, err)
	}
	return s.Data["tls.crt"], nil
}

// MissingCABundleError is a reconcile's failure for a user's CA bundle Secret
// (caBundleSecretRef, clientCABundleRef) that does not exist: ReportFailure makes it
// ReferenceValid=False with operatorv1alpha1.ReasonCABundleSecretNotFound, and retries until it appears.
type MissingCABundleError struct {
	// Name is the Secret's, in the object's namespace.
	Name string
}

func (e *MissingCABundleError) Error() string {
	return fmt.Sprintf("the CA bundle Secret %s does not exist: create it with the bundle in its key tls.crt", e.Name)
}

// OwnCABundle reads the tls.crt of a bundle Secret the controllers write, from the cache;
// found is false until it is written with content, whose event brings the caller back.
func (h *Host) OwnCABundle(namespace, name string) (data []byte, found bool, err error) {
	s, err := h.Issued(namespace, name)
	if err != nil || s == nil {
		return nil, false, err
	}
	return s.Data[corev1.TLSCertKey], true, nil
}
