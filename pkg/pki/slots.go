package pki

import (
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// Every CA the server makes can be rotated in two phases (docs/rotation.md): Start issues a
// new CA, with a new key, in the authority's other slot, next to the old one, and every
// bundle that trusts the authority carries both; Complete drops the old slot. A CA's two
// slots are its Secret (and Certificate) <ca>, slot 0, and <ca>-next, slot 1; the Issuer
// <ca> keeps its name and signs from whichever slot is current. This file names the slots
// and says where each CA is, as status.rotations has it, for the builders; the steps of a
// rotation are pkg/rotation's.

// Authority is the name of a rotatable CA in the rotation subresource.
type Authority = string

// CacheAuthority is a CacheServer's CA; a RootShard's authorities are its root CA,
// RootAuthority, and its intermediate CAs by their role (IntermediateCAs).
const CacheAuthority Authority = "ca"

// RootAuthority is a RootShard's root CA (RootCAName), the Issuer that signs its
// intermediates. What it signs are CAs, which keep their keys when they are issued again
// (CARotation): its rotation issues them again under the new root, and every leaf and
// bundle, whose anchors are the intermediates, keeps verifying.
const RootAuthority Authority = "root"

// RootShardIssuer is the Issuer (and slot 0) of authority a of the RootShard rootShard.
func RootShardIssuer(rootShard string, a Authority) string {
	if a == RootAuthority {
		return RootCAName(rootShard)
	}
	return CAName(rootShard, CA(a))
}

// RootShardAuthorities are the CAs of a RootShard that can be rotated: its root CA, then its
// intermediates.
func RootShardAuthorities() []Authority {
	out := []Authority{RootAuthority}
	for _, ca := range IntermediateCAs {
		out = append(out, Authority(ca))
	}
	return out
}

// CacheServerAuthorities are the CAs of a CacheServer that can be rotated.
func CacheServerAuthorities() []Authority { return []Authority{CacheAuthority} }

// NextSuffix is the suffix of a CA's slot 1.
const NextSuffix = "-next"

// SlotName is the Certificate and Secret of slot of the CA whose Issuer is base.
func SlotName(base string, slot int32) string {
	if slot == 1 {
		return base + NextSuffix
	}
	return base
}

// OtherSlot is the slot a rotation issues the new CA in, or the old CA's.
func OtherSlot(slot int32) int32 { return 1 - slot }

// Slots are where an authority's CAs are, as its rotation has it.
type Slots struct {
	// Issuer is the slot the authority's Issuer signs from: new leaves and credentials.
	Issuer int32
	// Live are the slots whose CA exists and is trusted, in slot order.
	Live []int32
}

// RotationOf is the rotation of authority in rotations, or nil.
func RotationOf(rotations []operatorv1alpha1.CARotationState, a Authority) *operatorv1alpha1.CARotationState {
	for i := range rotations {
		if rotations[i].Authority == a {
			return &rotations[i]
		}
	}
	return nil
}

// SlotsOf returns the slots of authority a: slot 0 alone until its first rotation; both
// from Start until Complete drops the old one, the Issuer on the old one until the leaves
// switch; the newest alone once dropped (OldDropped).
func SlotsOf(rotations []operatorv1alpha1.CARotationState, a Authority) Slots {
	slots := slotsOf(RotationOf(rotations, a))
	if st := RotationOf(rotations, a); a == Authority(ServiceAccountCA) && st != nil {
		// The service-account CA signs the signing leaves' new slot (SigningSlots) from Start
		// on: the verifiers know a leaf by its key, not by its CA, so the new keys are issued
		// and trusted before any shard signs with them.
		slots.Issuer = st.Slot
	}
	return slots
}

// slotsOf are the slots of a rotation st, nil for none: the Issuer on the old slot until
// the leaves switch.
func slotsOf(st *operatorv1alpha1.CARotationState) Slots {
	switch {
	case st == nil:
		return Slots{Issuer: 0, Live: []int32{0}}
	case OldDropped(st):
		return Slots{Issuer: st.Slot, Live: []int32{st.Slot}}
	}
	issuer := st.Slot
	if !st.LeavesSwitched {
		issuer = OtherSlot(st.Slot)
	}
	// In slot order, whichever signs: the bundles keep their bytes when the Issuer switches,
	// so that no pod rolls for it.
	return Slots{Issuer: issuer, Live: []int32{0, 1}}
}

// OldDropped reports whether the rotation st dropped its old CA: Complete, once every leaf
// came from the new CA, drops it from what the object wants (LastCompletionTime), while the
// rotation is still Completing; it becomes Completed once the old CA is deleted and the
// bundles without it are in the pods, so that Completed means what it says.
func OldDropped(st *operatorv1alpha1.CARotationState) bool {
	return st.Phase == operatorv1alpha1.CARotationCompleted ||
		(st.Phase == operatorv1alpha1.CARotationCompleting && st.LastCompletionTime != nil)
}

// IssuerSecret is the Secret the Issuer base signs from.
func IssuerSecret(base string, rotations []operatorv1alpha1.CARotationState, a Authority) string {
	return SlotName(base, SlotsOf(rotations, a).Issuer)
}

// TrustSuffix is the suffix of the bundle Secret of a rotated CA's live slots.
const TrustSuffix = "-trust"

// TrustSecret is the Secret whose tls.crt a pod mounts to trust authority a, whose Issuer is
// base: the CA's own Secret until its first rotation, then the bundle <ca>-trust of its
// live slots, which the controllers write, so that the pods trust both CAs while a rotation
// runs and the mount outlives either slot.
func TrustSecret(base string, rotations []operatorv1alpha1.CARotationState, a Authority) string {
	if RotationOf(rotations, a) == nil {
		return base
	}
	return base + TrustSuffix
}

// RootTrustSecret is TrustSecret for the root CA of rs that the server issues.
func RootTrustSecret(rs *operatorv1alpha1.RootShard) string {
	return TrustSecret(RootCAName(rs.Name), rs.Status.Rotations, RootAuthority)
}

// TrustSecretOf is TrustSecret for an intermediate CA of rs. A RootShard joined from a
// reference Secret (JoinedAnnotation) trusts each of its CAs through <ca>-trust always: the
// consumer writes it from the copy's bundle of the CA's live slots, whose rotation the
// in-memory RootShard does not know of.
func TrustSecretOf(rs *operatorv1alpha1.RootShard, ca CA) string {
	if _, joined := rs.Annotations[JoinedAnnotation]; joined {
		return CAName(rs.Name, ca) + TrustSuffix
	}
	return TrustSecret(CAName(rs.Name, ca), rs.Status.Rotations, Authority(ca))
}

// JoinedAnnotation marks the in-memory RootShard a consumer of a reference Secret realizes
// against (reference.JoinedRootShard); it is never written anywhere.
const JoinedAnnotation = AnnotationPrefix + "joined"
