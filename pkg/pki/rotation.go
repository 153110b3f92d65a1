package pki

import "slices"

// Every CA the server makes can be rotated in two phases (docs/rotation.md): Start issues a
// new CA, with a new key, in the authority's other slot, next to the old one, and every
// bundle that trusts the authority carries both; Complete drops the old slot. A CA's two
// slots are its Secret (and Certificate) <ca>, slot 0, and <ca>-next, slot 1; the Issuer
// <ca> keeps its name and signs from whichever slot is current.

// Authority is the name of a rotatable CA in the rotation subresource.
type Authority = string

// The authorities of a RootShard: its root CA and its intermediates (IntermediateCAs by
// their role), and a CacheServer's CA.
const (
	RootAuthority  Authority = "root"
	CacheAuthority Authority = "ca"
)

// RootShardAuthorities are the CAs of a RootShard that can be rotated, in a stable order.
func RootShardAuthorities() []Authority {
	out := []Authority{RootAuthority}
	for _, ca := range IntermediateCAs {
		out = append(out, Authority(ca))
	}
	return out
}

// CacheServerAuthorities are the CAs of a CacheServer that can be rotated.
func CacheServerAuthorities() []Authority { return []Authority{CacheAuthority} }

// IsIntermediate reports whether a is one of a RootShard's intermediate CAs.
func IsIntermediate(a Authority) bool { return slices.Contains(IntermediateCAs, CA(a)) }

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

// SwitchesLeavesAtComplete reports whether the leaves of a switch to the new CA only at
// Complete: serving certificates, which every client must have had the time to trust the new
// CA for, as Gardener rotates a cluster's server CA. Every other authority's leaves switch
// once the new CA is trusted everywhere, during Start.
func SwitchesLeavesAtComplete(a Authority) bool {
	return a == Authority(ServerCA) || a == CacheAuthority
}
