package controller

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/rotation"
)

// AdvanceRotations takes the rotations of the object of in a step each (docs/rotation.md):
// it reads what they need of the host (rotation.ReadsFor), lets rotation.Decide take the
// steps, and acts on its decisions: it deletes the old slots, writes the next rotations, and
// sets the condition CARotation in conditions. in.Owner is the reconcile's owner, and in.Now
// the time, to the second.
func AdvanceRotations(ctx context.Context, h *hostcluster.Host, in rotation.Input,
	rotations *[]operatorv1alpha1.CARotationState, conditions *[]metav1.Condition) error {
	owner, _ := hostcluster.OwnerFrom(ctx)
	in.Owner = rotation.Owner{Kind: owner.Kind, Name: owner.Name, UID: owner.UID}
	in.Now = metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	namespace := in.Object.Namespace
	in.Reads = map[pki.Authority]rotation.Read{}
	for _, st := range in.Rotations {
		read, err := readRotation(h, namespace, in.Rotations, rotation.ReadsFor(in, st))
		if err != nil {
			return err
		}
		in.Reads[st.Authority] = read
	}
	d := rotation.Decide(in)
	if err := deleteSlots(ctx, h, namespace, d.OldSlots); err != nil {
		return err
	}
	for _, s := range d.Steps {
		klog.FromContext(ctx).Info("A CA rotation advanced", "namespace", namespace, "ca", s.Issuer,
			"phase", s.Next.Phase, "leavesSwitched", s.Next.LeavesSwitched, "oldDropped", pki.OldDropped(&s.Next))
	}
	*rotations = d.Rotations
	if err := deleteSlots(ctx, h, namespace, d.OldSigningSlots); err != nil {
		return err
	}
	if d.Condition == nil {
		meta.RemoveStatusCondition(conditions, operatorv1alpha1.ConditionCARotation)
	} else {
		meta.SetStatusCondition(conditions, *d.Condition)
	}
	return nil
}

// readRotation reads from the host's cache what r says a rotation needs.
func readRotation(h *hostcluster.Host, namespace string, rotations []operatorv1alpha1.CARotationState, r rotation.Reads) (rotation.Read, error) {
	var read rotation.Read
	var err error
	if r.OldGone {
		if read.OldGone, err = h.SlotGone(namespace, r.Old); err != nil {
			return read, err
		}
	}
	if r.NewIssued {
		if read.NewIssued, err = h.CAIssued(namespace, r.Newest); err != nil {
			return read, err
		}
	}
	if r.LeavesOnNew && read.NewIssued {
		if read.LeavesOnNew, err = h.LeavesSignedBy(namespace, r.Issuer, r.Newest); err != nil {
			return read, err
		}
	}
	if r.Fingerprints {
		if read.NewCA, err = h.CAFingerprint(namespace, r.Newest); err != nil {
			return read, err
		}
		if read.OldCA, err = h.CAFingerprint(namespace, r.Old); err != nil {
			return read, err
		}
	}
	if r.SigningKeys != nil {
		if read.SigningKeysTrusted, err = h.SigningKeysTrusted(namespace, rotations, r.SigningKeys, r.Newest); err != nil {
			return read, err
		}
	}
	return read, nil
}

// deleteSlots deletes each slot of deletions as its owner's (hostcluster.Host.DeleteSlot).
func deleteSlots(ctx context.Context, h *hostcluster.Host, namespace string, deletions []rotation.Deletion) error {
	for _, del := range deletions {
		if err := h.DeleteSlot(ctx, namespace, del.Slot, hostcluster.Owner{Kind: del.Owner.Kind, Name: del.Owner.Name, UID: del.Owner.UID}); err != nil {
			return err
		}
	}
	return nil
}
