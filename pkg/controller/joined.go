package controller

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// ResolveReference reads the copy of a reference Secret of kind r named name in namespace
// from the cache of copies, and checks it (reference.Resolve). A *reference.Error says why
// it cannot be used: ReferenceValid=False with its Reason and Message.
func (h *Host) ResolveReference(namespace string, ref *corev1.LocalObjectReference, r reference.Reference) (*reference.Resolved, error) {
	if h.References == nil {
		return nil, reference.NotFound(namespace, ref.Name)
	}
	secret, err := h.References.Secrets(namespace).Get(ref.Name)
	if apierrors.IsNotFound(err) {
		return nil, reference.NotFound(namespace, ref.Name)
	}
	if err != nil {
		return nil, err
	}
	return reference.Resolve(secret, r)
}

// Join resolves the copy ref names for the consumer owner of kind, and returns the RootShard
// it joins with the local CAs to write (reference.Join).
func (h *Host) Join(kind, namespace, owner string, ref *corev1.LocalObjectReference, r reference.Reference) (*reference.Joined, error) {
	resolved, err := h.ResolveReference(namespace, ref, r)
	if err != nil {
		return nil, err
	}
	j := reference.Join(kind, namespace, owner, resolved)
	return &j, nil
}

// ApplyJoined writes a consumer's local CA Secrets and bundles, then the Issuers of its CAs,
// and returns how many objects it wrote. Only the Issuers read the key pairs; no pod mounts
// them.
func (h *Host) ApplyJoined(ctx context.Context, j *reference.Joined) (int, error) {
	wrote := 0
	for _, s := range j.Secrets {
		w, err := h.SecretApplier.ApplyIfChanged(ctx, s)
		if err != nil {
			return wrote, err
		}
		wrote += Count(w)
	}
	n, err := h.ApplyCertificates(ctx, j.Issuers, nil)
	return wrote + n, err
}

// NamingSecret is a Watches key function over the copies of reference Secrets: the keys of
// the objects of a namespace lister whose secretRef (as names reads it) is the Secret's
// name.
func NamingSecret[T metav1.Object](objects func(namespace string) Lister[T], names func(T) []string) func(metav1.Object) []string {
	return func(m metav1.Object) []string {
		return Select(objects(m.GetNamespace()), func(o T) bool {
			for _, n := range names(o) {
				if n == m.GetName() {
					return true
				}
			}
			return false
		})
	}
}

// ReferenceInvalid reports a copy that cannot be used: ReferenceValid=False with the
// resolver's reason and message (they name the Secret and the key, never content), and an
// Event the first time. Anything else is an error to retry.
func (l Lifecycle[T, S]) ReferenceInvalid(obj T, status *S, err error) error {
	var refErr *reference.Error
	if !errors.As(err, &refErr) {
		return err
	}
	l.ReferenceMissing(obj, status, refErr.Reason, refErr.Message, "Secret")
	return nil
}

// CacheKubeconfig is the kubeconfig Secret a root shard or shard k writes toward its
// CacheServer when it names a copy of the CacheServer's cache-client Secret, and nil when it
// does not. A *reference.Error says why the copy cannot be used.
func (h *Host) CacheKubeconfig(k kcp.Shard) (*corev1ac.SecretApplyConfiguration, error) {
	if k.CacheSecretRef == nil {
		return nil, nil
	}
	r, err := h.ResolveReference(k.Namespace, k.CacheSecretRef, reference.CacheClient)
	if err != nil {
		return nil, err
	}
	return cacheserver.KubeconfigSecret(k.Namespace, k.CacheKubeconfig(), pki.Labels(k.Kind, k.Name, "cache-kubeconfig"),
		r.CacheURL.String(), r.CACert.PEM, r.Client.PEM.Cert, r.Client.PEM.Key)
}
