package hostcluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
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

// RotationObservation is what the host shows of one authority's rotation.
type RotationObservation struct {
	// NewIssued: the newest slot's Certificate is Ready and its Secret holds the CA.
	NewIssued bool
	// LeavesOnNew: every certificate the authority's Issuer signs (the root CA's: the
	// intermediates) is Ready and signed by the newest CA.
	LeavesOnNew bool
	// Settled: the reconcile wrote nothing, and the object's workloads are available, so that
	// every bundle it wrote is in the pods.
	Settled bool
	// OldGone: the old slot's Certificate and Secret are deleted.
	OldGone bool
}

// NextRotation is one step of an authority's rotation, from what the host shows: Preparing
// becomes Prepared once the new CA is issued and trusted everywhere, and, for an authority
// whose leaves switch at Start, once they did; Completing switches the leaves of the others
// (the server CA's), then, once every leaf comes from the new CA, drops the old CA
// (LastCompletionTime, pki.OldDropped), and becomes Completed once the old CA is deleted and
// the bundles without it are in the pods. Prepared and Completed wait for a request. The old
// slot is deleted only once the object says it dropped it (AdvanceRotations), so that no
// reconcile of an older copy of the object applies it again.
func NextRotation(st operatorv1alpha1.CARotationState, o RotationObservation, now metav1.Time) operatorv1alpha1.CARotationState {
	next := *st.DeepCopy()
	switch st.Phase {
	case operatorv1alpha1.CARotationPreparing:
		switch {
		case !o.NewIssued || !o.Settled:
		case pki.SwitchesLeavesAtComplete(st.Authority):
			next.Phase, next.LastPreparedTime = operatorv1alpha1.CARotationPrepared, &now
		case !st.LeavesSwitched:
			next.LeavesSwitched = true
		case o.LeavesOnNew:
			next.Phase, next.LastPreparedTime = operatorv1alpha1.CARotationPrepared, &now
		}
	case operatorv1alpha1.CARotationCompleting:
		switch {
		case !st.LeavesSwitched:
			next.LeavesSwitched = true
		case st.LastCompletionTime == nil:
			if o.LeavesOnNew && o.Settled {
				next.LastCompletionTime = &now
			}
		case o.OldGone && o.Settled:
			next.Phase = operatorv1alpha1.CARotationCompleted
		}
	}
	return next
}

// RotationWaits names what the rotation st waits for before NextRotation takes its next step,
// from the same observation; unsettled names what keeps o from being Settled (the object, its
// members). issuer is the authority's Issuer, newest and old its slots. Prepared and
// Completed wait for a request, not for the host: nothing.
func RotationWaits(st operatorv1alpha1.CARotationState, o RotationObservation, unsettled []string, issuer, newest, old string) []string {
	var out []string
	settled := func() {
		if !o.Settled {
			out = append(out, unsettled...)
		}
	}
	leaves := func() {
		if !o.LeavesOnNew {
			out = append(out, fmt.Sprintf("the certificates the Issuer %s signs to come from the new CA %s", issuer, newest))
		}
	}
	switch st.Phase {
	case operatorv1alpha1.CARotationPreparing:
		if !o.NewIssued {
			out = append(out, fmt.Sprintf("the new CA %s to be issued", newest))
		}
		settled()
		if o.NewIssued && o.Settled && st.LeavesSwitched && !pki.SwitchesLeavesAtComplete(st.Authority) {
			leaves()
		}
	case operatorv1alpha1.CARotationCompleting:
		switch {
		case !st.LeavesSwitched:
		case st.LastCompletionTime == nil:
			leaves()
			settled()
		default:
			if !o.OldGone {
				out = append(out, fmt.Sprintf("the old CA %s to be deleted", old))
			}
			settled()
		}
	}
	return out
}

// AdvanceRotations takes each running rotation of rotations one step, when the host allows
// it, and deletes the old slot of a Completed one, which the object's desired CAs no longer
// hold. base is the name of an authority's Issuer (and of its slot 0) in namespace;
// unsettled names, for a rotation, what keeps the reconcile from being settled
// (RotationObservation): nothing once it is. It returns the rotations and, by authority,
// what each running rotation that did not advance waits for (RotationWaits).
func (h *Host) AdvanceRotations(ctx context.Context, namespace string, base func(pki.Authority) string,
	rotations []operatorv1alpha1.CARotationState, unsettled func(operatorv1alpha1.CARotationState) []string) ([]operatorv1alpha1.CARotationState, map[string][]string, error) {
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	out := make([]operatorv1alpha1.CARotationState, len(rotations))
	waiting := map[string][]string{}
	for i, st := range rotations {
		out[i] = *st.DeepCopy()
		issuer := base(st.Authority)
		u := unsettled(st)
		o := RotationObservation{Settled: len(u) == 0}
		old := pki.SlotName(issuer, pki.OtherSlot(st.Slot))
		if pki.OldDropped(&st) {
			if err := h.deleteCASlot(ctx, namespace, old, reconciled(ctx)); err != nil {
				return rotations, nil, err
			}
			o.OldGone = h.caSlotGone(namespace, old)
		}
		if st.Phase != operatorv1alpha1.CARotationPreparing && st.Phase != operatorv1alpha1.CARotationCompleting {
			continue
		}
		newest := pki.SlotName(issuer, st.Slot)
		o.NewIssued = h.caIssued(namespace, newest)
		if o.NewIssued && st.LeavesSwitched {
			o.LeavesOnNew = h.leavesSignedBy(namespace, issuer, newest)
		}
		next := NextRotation(st, o, now)
		if next.Phase != st.Phase || next.LeavesSwitched != st.LeavesSwitched || pki.OldDropped(&next) != pki.OldDropped(&st) {
			klog.FromContext(ctx).Info("A CA rotation advanced", "namespace", namespace, "ca", issuer,
				"phase", next.Phase, "leavesSwitched", next.LeavesSwitched, "oldDropped", pki.OldDropped(&next))
		} else if w := RotationWaits(st, o, u, issuer, newest, old); len(w) > 0 {
			waiting[st.Authority] = w
		}
		out[i] = next
	}
	return out, waiting, nil
}

// caIssued reports whether the CA name is Ready and its Secret holds a certificate.
func (h *Host) caIssued(namespace, name string) bool {
	cert, err := h.Certificates.Certificates(namespace).Get(name)
	if err != nil || !certificateReady(cert) {
		return false
	}
	s, err := h.Secrets.Secrets(namespace).Get(name)
	return err == nil && len(s.Data["tls.crt"]) > 0
}

// leavesSignedBy reports whether every Certificate of namespace that the Issuer issuer signs,
// whichever object's, is Ready and its Secret signed by the CA in the Secret ca: leaves, and
// the intermediate CAs a RootShard's root CA signs; but the signing leaves.
func (h *Host) leavesSignedBy(namespace, issuer, ca string) bool {
	caSecret, err := h.Secrets.Secrets(namespace).Get(ca)
	if err != nil {
		return false
	}
	certs, err := h.Certificates.Certificates(namespace).List(labels.Everything())
	if err != nil {
		return false
	}
	for _, c := range certs {
		ref := c.Spec.IssuerRef
		// A signing leaf's old slot stays signed by the old CA until Complete; its new slot
		// was issued by the new CA before the shards signed with it (SigningKeysTrusted).
		if ref.Name != issuer || (ref.Kind != "" && ref.Kind != "Issuer") || pki.IsSigningLeaf(c.Labels) {
			continue
		}
		if !certificateReady(c) {
			return false
		}
		leaf, err := h.Secrets.Secrets(namespace).Get(c.Spec.SecretName)
		if err != nil || NotSignedBy(leaf.Data["tls.crt"], caSecret.Data["tls.crt"]) {
			return false
		}
	}
	return true
}

// caSlotGone reports whether the cache holds neither the Certificate nor the Secret of a CA
// slot (or a signing leaf's).
func (h *Host) caSlotGone(namespace, name string) bool {
	_, certErr := h.Certificates.Certificates(namespace).Get(name)
	_, secretErr := h.Secrets.Secrets(namespace).Get(name)
	return apierrors.IsNotFound(certErr) && apierrors.IsNotFound(secretErr)
}

// deleteCASlot deletes a CA slot's (or a signing leaf's) Certificate, then its Secret, so
// that cert-manager does not issue it again: what the CA signed, or the leaf's key, is
// trusted nowhere after this. Only the reconciled owner's are deleted, never by name alone:
// each carries the managed-by label, the owner's label and its UID (slotOf), and the delete
// is held to the UID read (a precondition), so that an object that took the name since is
// never reached. Another's under the name is a NameConflictError, and stays. What the cache
// does not hold is gone already.
func (h *Host) deleteCASlot(ctx context.Context, namespace, name string, owner Owner) error {
	if h.caSlotGone(namespace, name) {
		return nil
	}
	if owner.Kind == "" {
		return fmt.Errorf("deleting the old slot %s/%s: no owner to hold it to", namespace, name)
	}
	klog.FromContext(ctx).Info("Deleting the old slot of a rotation that dropped it", "namespace", namespace, "slot", name)
	if cert, err := h.Certificates.Certificates(namespace).Get(name); err == nil {
		if !slotOf(cert, owner) {
			return &NameConflictError{Kind: "Certificate", Namespace: namespace, Name: name, Holder: holder(cert)}
		}
		err := h.CertManager.CertmanagerV1().Certificates(namespace).Delete(ctx, name, deleteHeldTo(cert.UID))
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting the Certificate %s of an old slot: %w", name, err)
		}
	}
	if s, err := h.Secrets.Secrets(namespace).Get(name); err == nil {
		if !slotOf(s, owner) {
			return &NameConflictError{Kind: "Secret", Namespace: namespace, Name: name, Holder: holder(s)}
		}
		err := h.Kube.CoreV1().Secrets(namespace).Delete(ctx, name, deleteHeldTo(s.UID))
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting the Secret %s of an old slot: %w", name, err)
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

// reconciled is the reconcile's owner, as WithOwner set it, whose UID an object created
// without one (a unit test's) lacks.
func reconciled(ctx context.Context) Owner {
	o, _ := ctx.Value(ownerKey{}).(Owner)
	return o
}
