package controller

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// ReferenceSecretSelector selects the Secrets the ReferenceSecrets informer caches: the
// reference Secrets and their copies, which keep the label (a copy without it is not seen).
// The copies are the users' (or a sync tool's) and carry no label of ours beyond it.
func ReferenceSecretSelector(o *metav1.ListOptions) { o.LabelSelector = reference.Label }

// ResolveReference reads the reference Secret namespace/name from the ReferenceSecrets cache
// and resolves it as r. A Secret that is not there or not a well-formed r is a
// *reference.Error, whose Reason (ReasonReferenceSecretNotFound, ReasonReferenceSecretInvalid)
// and Message go to ReferenceValid as they are: the message names the Secret and the key,
// never their content. Any other error is the cache's, to retry.
func (h *Host) ResolveReference(namespace, name string, r reference.Reference) (*reference.Resolved, error) {
	s, err := h.ReferenceSecrets.Secrets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, reference.NotFound(namespace, name)
	}
	if err != nil {
		return nil, err
	}
	return reference.Resolve(s, r)
}

// ReferenceProblem is the *reference.Error in err, when err says what is wrong with a
// reference Secret rather than that the cache failed.
func ReferenceProblem(err error) (*reference.Error, bool) {
	var e *reference.Error
	return e, errors.As(err, &e)
}

// ApplyJoined applies the local CA Secrets, bundles and CA Issuers a consumer realizes from a
// reference Secret (reference.Join), and returns how many it wrote. They carry the
// consumer's owner label: its deletion deletes them.
func (h *Host) ApplyJoined(ctx context.Context, j reference.Joined) (int, error) {
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
