package hostcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
)

// LiveCAs reads the first certificate of each live slot of the CA whose Issuer is base, from
// the cache, in slot order, as one PEM bundle. issued is false until the Issuer's slot is
// issued; the other slot, while a rotation issues or drops it, is left out when it is not
// there.
func (h *Host) LiveCAs(namespace, base string, slots pki.Slots) (bundle []byte, issued bool, err error) {
	pems, issued, err := h.liveSlots(namespace, base, slots, pki.FirstCertificate)
	if err != nil || !issued {
		return nil, issued, err
	}
	return certificates.Bundle(pems...), true, nil
}

// LiveCAChains is LiveCAs with each slot's whole tls.crt, one per slot, the chain above the CA included:
// a RootShard's root CA, whose bundles carry the chain up to the namespace bootstrap or the
// user's issuer.
func (h *Host) LiveCAChains(namespace, base string, slots pki.Slots) (pems [][]byte, issued bool, err error) {
	return h.liveSlots(namespace, base, slots, func(chain []byte) ([]byte, error) {
		if _, err := pki.FirstCertificate(chain); err != nil {
			return nil, err
		}
		return chain, nil
	})
}

func (h *Host) liveSlots(namespace, base string, slots pki.Slots, read func([]byte) ([]byte, error)) (pems [][]byte, issued bool, err error) {
	for _, slot := range slots.Live {
		s, err := h.Secrets.Secrets(namespace).Get(pki.SlotName(base, slot))
		if apierrors.IsNotFound(err) || (err == nil && len(s.Data["tls.crt"]) == 0) {
			if slot == slots.Issuer {
				return nil, false, nil
			}
			continue
		}
		if err != nil {
			return nil, false, err
		}
		if !h.slotIssued(s, slot == slots.Issuer) {
			// Not what cert-manager issued for the slot's Certificate: never trusted.
			if slot == slots.Issuer {
				return nil, false, nil
			}
			continue
		}
		pem, err := read(s.Data["tls.crt"])
		if err != nil {
			return nil, false, fmt.Errorf("reading the CA Secret %s: %w", s.Name, err)
		}
		pems = append(pems, pem)
	}
	return pems, true, nil
}

// slotIssued reports whether a slot's Secret s is the one cert-manager issued for the slot's
// Certificate: the cache holds a Certificate of its name, and both carry one owner's UID. A
// Secret with our labels is not enough: anyone who may create Secrets can set them, and a CA
// slot's Secret is trusted by every bundle. Only the Issuer's slot is read without a
// Certificate of its name (a CA the user gave, caSecretRef).
func (h *Host) slotIssued(s *corev1.Secret, issuer bool) bool {
	cert, err := h.Certificates.Certificates(s.Namespace).Get(s.Name)
	if apierrors.IsNotFound(err) {
		return issuer
	}
	uid := cert.Labels[pki.LabelOwnerUID]
	return err == nil && s.Labels[pki.LabelOwnerUID] == uid
}

// CAIssued reports whether the CA name (a slot) is Ready and its Secret holds a certificate.
func (h *Host) CAIssued(namespace, name string) (bool, error) {
	cert, err := h.Certificates.Certificates(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the Certificate %s/%s: %w", namespace, name, err)
	}
	if !certificateReady(cert) {
		return false, nil
	}
	s, err := h.Secrets.Secrets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the Secret %s/%s: %w", namespace, name, err)
	}
	return len(s.Data["tls.crt"]) > 0, nil
}

// LeavesSignedBy reports whether every Certificate of namespace that the Issuer issuer signs,
// whichever object's, is Ready and its Secret signed by the CA in the Secret ca: leaves, and
// the intermediate CAs a RootShard's root CA signs; but the signing leaves.
func (h *Host) LeavesSignedBy(namespace, issuer, ca string) (bool, error) {
	caSecret, err := h.Secrets.Secrets(namespace).Get(ca)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the CA Secret %s/%s: %w", namespace, ca, err)
	}
	certs, err := h.Certificates.Certificates(namespace).List(labels.Everything())
	if err != nil {
		return false, fmt.Errorf("listing the Certificates of %s: %w", namespace, err)
	}
	for _, c := range certs {
		ref := c.Spec.IssuerRef
		// A signing leaf's old slot stays signed by the old CA until Complete; its new slot
		// was issued by the new CA before the shards signed with it (SigningKeysTrusted).
		if ref.Name != issuer || (ref.Kind != "" && ref.Kind != "Issuer") || pki.IsSigningLeaf(c.Labels) {
			continue
		}
		if !certificateReady(c) {
			return false, nil
		}
		leaf, err := h.Secrets.Secrets(namespace).Get(c.Spec.SecretName)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("reading the Secret %s/%s: %w", namespace, c.Spec.SecretName, err)
		}
		if NotSignedBy(leaf.Data["tls.crt"], caSecret.Data["tls.crt"]) {
			return false, nil
		}
	}
	return true, nil
}

// SlotGone reports whether the cache holds neither the Certificate nor the Secret of a CA
// slot (or a signing leaf's).
func (h *Host) SlotGone(namespace, name string) (bool, error) {
	_, certErr := h.Certificates.Certificates(namespace).Get(name)
	if certErr != nil && !apierrors.IsNotFound(certErr) {
		return false, fmt.Errorf("reading the Certificate %s/%s: %w", namespace, name, certErr)
	}
	_, secretErr := h.Secrets.Secrets(namespace).Get(name)
	if secretErr != nil && !apierrors.IsNotFound(secretErr) {
		return false, fmt.Errorf("reading the Secret %s/%s: %w", namespace, name, secretErr)
	}
	return apierrors.IsNotFound(certErr) && apierrors.IsNotFound(secretErr), nil
}

// DeleteSlot deletes a CA slot's (or a signing leaf's) Certificate, then its Secret, so
// that cert-manager does not issue it again: what the CA signed, or the leaf's key, is
// trusted nowhere after this. Only the reconciled owner's are deleted, never by name alone:
// each carries the managed-by label, the owner's label and its UID (slotOf), and the delete
// is held to the UID read (a precondition), so that an object that took the name since is
// never reached. Another's under the name is a NameConflictError, and stays. What the cache
// does not hold is gone already.
func (h *Host) DeleteSlot(ctx context.Context, namespace, name string, owner Owner) error {
	if gone, err := h.SlotGone(namespace, name); err != nil || gone {
		return err
	}
	if owner.Kind == "" {
		return fmt.Errorf("deleting the old slot %s/%s: no owner to hold it to", namespace, name)
	}
	klog.FromContext(ctx).Info("Deleting the old slot of a rotation that dropped it", "namespace", namespace, "slot", name)
	// The Certificate first, so that cert-manager does not write the Secret again.
	for _, o := range []struct {
		kind   string
		get    func() (metav1.Object, error)
		delete func(metav1.DeleteOptions) error
	}{
		{"Certificate", func() (metav1.Object, error) { return gotten(h.Certificates.Certificates(namespace).Get(name)) },
			func(opts metav1.DeleteOptions) error {
				return h.CertManager.CertmanagerV1().Certificates(namespace).Delete(ctx, name, opts)
			}},
		{"Secret", func() (metav1.Object, error) { return gotten(h.Secrets.Secrets(namespace).Get(name)) },
			func(opts metav1.DeleteOptions) error {
				return h.Kube.CoreV1().Secrets(namespace).Delete(ctx, name, opts)
			}},
	} {
		obj, err := o.get()
		if err != nil {
			continue
		}
		if !slotOf(obj, owner) {
			return &NameConflictError{Kind: o.kind, Namespace: namespace, Name: name, Holder: holder(obj)}
		}
		err = o.delete(deleteHeldTo(obj.GetUID()))
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting the %s %s of an old slot: %w", o.kind, name, err)
		}
	}
	return nil
}

// slotOf reports whether a slot's Certificate or Secret is owner's: the managed-by label, the
// owner's kind and name, and its UID, exactly (slots came after the UID mark: none is
// without it).
func slotOf(o metav1.Object, owner Owner) bool {
	l := o.GetLabels()
	return l[pki.LabelManagedBy] == pki.ManagedBy && l[pki.OwnerLabel(owner.Kind)] == owner.Name &&
		l[pki.LabelOwnerUID] == string(owner.UID)
}

// deleteHeldTo are the options of a delete held to the UID read: a 409 when the name is
// another object's by now.
func deleteHeldTo(uid types.UID) metav1.DeleteOptions {
	return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
}

// CAFingerprint is the fingerprint (pki.Fingerprint) of the CA in the Secret name, the first
// certificate of its tls.crt; empty while the Secret or its certificate is missing.
func (h *Host) CAFingerprint(namespace, name string) (string, error) {
	s, err := h.Secrets.Secrets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the Secret %s/%s: %w", namespace, name, err)
	}
	if len(s.Data["tls.crt"]) == 0 {
		return "", nil
	}
	fps, err := pki.Fingerprints(s.Data["tls.crt"])
	if err != nil {
		return "", fmt.Errorf("the CA of the Secret %s/%s: %w", namespace, name, err)
	}
	return fps[0], nil
}
