package hostcluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CertManagerReady reports whether cert-manager's API is served and cached.
func (h *Host) CertManagerReady() bool {
	return h.CertManagerAPI.Ready()
}

// NamespaceTerminating tells whether namespace is being deleted. Its RootShards go with it
// (references do not leave a namespace), and so does the kcp they run: cleaning up inside
// that kcp first would only wait for a server that is going away. A namespace that cannot be
// found is not terminating: the caller's object is in it.
func (h *Host) NamespaceTerminating(ctx context.Context, namespace string) (bool, error) {
	ns, err := h.Kube.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating, nil
}
