package hostcluster

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// ReferenceSecretSelector selects the Secrets the ReferenceSecrets informer caches: the
// reference Secrets and their copies, which keep the label (a copy without it is not seen).
// The copies are the users' (or a sync tool's) and carry no label of ours beyond it.
func ReferenceSecretSelector(o *metav1.ListOptions) { o.LabelSelector = reference.Label }

// ResolveReference reads the reference Secret namespace/name from the ReferenceSecrets cache
// and resolves it as r. A Secret that is not there, not labelled (so not in the cache) or not
// a well-formed r is a *reference.Error, whose Reason (operatorv1alpha1.ReasonReferenceSecretNotFound,
// operatorv1alpha1.ReasonReferenceSecretNotLabelled, operatorv1alpha1.ReasonReferenceSecretInvalid) and Message go to
// ReferenceValid as they are: the message names the Secret and the key, never their content.
// Any other error is the cache's, to retry.
func (h *Host) ResolveReference(ctx context.Context, namespace, name string, r reference.Reference) (*reference.Resolved, error) {
	s, err := h.ReferenceSecrets.Secrets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		if h.unlabelledSecret(ctx, namespace, name) {
			return nil, reference.NotLabelled(namespace, name, r)
		}
		return nil, reference.NotFound(namespace, name)
	}
	if err != nil {
		return nil, err
	}
	return reference.Resolve(s, r)
}

// unlabelledGetTimeout bounds the GET of unlabelledSecret.
const unlabelledGetTimeout = 10 * time.Second

// unlabelledSecret reports whether the Secret namespace/name exists without the label
// reference.Label, which keeps it out of the cache of copies. It is asked only when that
// cache misses, a failure path already: the cache of every Secret's metadata answers once it
// has synced, else (before that, and in unit tests) a GET of the host does. A Secret with the
// label is one the cache of copies has not caught up with yet, whose event will bring the
// consumer back, and an error is no answer: both leave the reason at not found. The label
// added, the copy enters the cache of copies, whose event heals the consumer
// (Watches.Referencing).
func (h *Host) unlabelledSecret(ctx context.Context, namespace, name string) bool {
	var labels map[string]string
	if h.SecretMetadata != nil && h.SecretMetadata.HasSynced() {
		obj, exists, err := h.SecretMetadata.GetIndexer().GetByKey(namespace + "/" + name)
		if err != nil || !exists {
			return false
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return false
		}
		labels = m.GetLabels()
	} else {
		if h.Kube == nil {
			return false
		}
		ctx, cancel := context.WithTimeout(ctx, unlabelledGetTimeout)
		defer cancel()
		s, err := h.Kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		labels = s.Labels
	}
	_, labelled := labels[reference.Label]
	return !labelled
}

// ReferenceProblem is the *reference.Error in err, when err says what is wrong with a
// reference Secret rather than that the cache failed.
func ReferenceProblem(err error) (*reference.Error, bool) {
	var e *reference.Error
	return e, errors.As(err, &e)
}
