package pki

import (
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// A shard signs its ServiceAccount tokens with the key of its service-account leaf, and
// every component verifies them by that leaf's public key, not by the CA that signed it: a
// new key breaks every token the old one signed. So the leaf keeps its key when cert-manager
// renews it (SigningRotation), and a rotation of the service-account CA brings the new key in
// the leaf's other slot, as a CA's (SigningSlots): Start issues it there, from the CA's new
// slot, while the old leaf keeps signing; every verifier trusts both keys through the
// Secret <shard>-service-account-trust (the public certificates of the live slots, in slot
// order, as <ca>-trust holds a CA's); only then do the shards sign with the new slot
// (LeavesSwitched); Complete drops the old slot.

// ServiceAccountRole is the role, and the component label, of a shard's signing leaf.
const ServiceAccountRole = "service-account"

// SigningSlots are the slots of a shard's signing leaf, as the rotation of the
// service-account CA in rotations has them: Issuer is the slot the shard signs with (the old
// one until the rotation's leaves switch), Live the slots that exist and are trusted.
func SigningSlots(rotations []operatorv1alpha1.CARotationState) Slots {
	return slotsOf(RotationOf(rotations, Authority(ServiceAccountCA)))
}

// IsSigningLeaf reports whether labels, a Certificate's, are a signing leaf's: its verifiers
// know it by its key, so it is never issued again with another one (the Host's stale
// leaves), and its old slot is not signed by the new CA.
func IsSigningLeaf(labels map[string]string) bool {
	return labels[LabelComponent] == ServiceAccountRole
}
