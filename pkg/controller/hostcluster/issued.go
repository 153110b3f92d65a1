package hostcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Issued is the Secret namespace/name from the cache once cert-manager (or a controller)
// has written it, that is once every one of keys holds something (tls.crt by default); nil
// before, and its event brings the caller back.
func (h *Host) Issued(namespace, name string, keys ...string) (*corev1.Secret, error) {
	s, err := h.Secrets.Secrets(namespace).Get(name)
	return issued(s, err, keys)
}

// IssuedCA is the CA certificate alone (the first of the chain) of the CA Secret
// namespace/name, from the cache; nil until cert-manager has issued it.
func (h *Host) IssuedCA(namespace, name string) ([]byte, error) {
	s, err := h.Issued(namespace, name)
	return caCertificate(name, s, err)
}

// UsersCA is IssuedCA of a CA Secret a user names: it carries no label of ours, so when the
// cache does not hold it, it is read.
func (h *Host) UsersCA(ctx context.Context, namespace, name string) ([]byte, error) {
	s, err := h.Secrets.Secrets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		s, err = h.Kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	}
	s, err = issued(s, err, nil)
	return caCertificate(name, s, err)
}

// issued is s once every one of keys (tls.crt by default) holds something, nil while it is
// not found or not filled in yet.
func issued(s *corev1.Secret, err error, keys []string) (*corev1.Secret, error) {
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		keys = []string{corev1.TLSCertKey}
	}
	for _, k := range keys {
		if len(s.Data[k]) == 0 {
			return nil, nil
		}
	}
	return s, nil
}

// caCertificate is the first certificate of an issued CA Secret's chain, nil for none.
func caCertificate(name string, s *corev1.Secret, err error) ([]byte, error) {
	if err != nil || s == nil {
		return nil, err
	}
	first, err := pki.FirstCertificate(s.Data[corev1.TLSCertKey])
	if err != nil {
		return nil, fmt.Errorf("reading the CA Secret %s: %w", name, err)
	}
	return first, nil
}
