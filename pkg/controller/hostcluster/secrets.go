package hostcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// AnySecret reads the Secret namespace/name, whoever wrote it: from the cache of the
// controllers' own, else from the host, since the cache holds only what the controllers
// wrote. nil when there is none.
func (h *Host) AnySecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	s, err := h.Secrets.Secrets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		s, err = h.Kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the Secret %s/%s: %w", namespace, name, err)
	}
	return s, nil
}

// DeleteSecrets deletes the Secrets of the controllers' own in namespace that selector
// selects, as the cache has them, except those keep keeps; each with its UID as a
// precondition, so that a Secret created again under the same name in between stays. It
// returns how many it deleted.
func (h *Host) DeleteSecrets(ctx context.Context, namespace string, selector labels.Selector, keep func(*corev1.Secret) bool) (int, error) {
	secrets, err := h.Secrets.Secrets(namespace).List(selector)
	if err != nil {
		return 0, err
	}
	deleted := 0
	for _, s := range secrets {
		if keep(s) {
			continue
		}
		err := h.Kube.CoreV1().Secrets(namespace).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return deleted, fmt.Errorf("deleting the former Secret %s/%s: %w", namespace, s.Name, err)
		}
		deleted++
	}
	return deleted, nil
}
