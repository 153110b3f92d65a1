package rotation

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Owner is the object a slot to delete must belong to: its owner label's kind (lower case)
// and name, and its UID. The host deletes a slot only as its owner's.
type Owner struct {
	Kind, Name string
	UID        types.UID
}

// Signer is a shard that signs ServiceAccount tokens, the root shard or one of its Shards:
// Leaf is its signing leaf's slot 0 (<shard>-service-account).
type Signer struct {
	Owner Owner
	Leaf  string
}

// Read is what the controller read of the host for one rotation (ReadsFor says what to
// read): the facts of its slots, each false when not read.
type Read struct {
	// NewIssued: the newest slot's Certificate is Ready and its Secret holds the CA.
	NewIssued bool
	// LeavesOnNew: every certificate the Issuer signs is Ready and signed by the newest CA.
	LeavesOnNew bool
	// OldGone: the cache holds neither the old slot's Certificate nor its Secret.
	OldGone bool
	// SigningKeysTrusted: the new signing key of each shard the service-account CA's rotation
	// waits for is issued and in its <shard>-service-account-trust (SigningKeysToTrust).
	SigningKeysTrusted bool
	// NewCA and OldCA are the fingerprints (pki.Fingerprint) of the CAs of the newest and the
	// old slot, each empty while its Secret holds none: what linked consumers report trusting.
	NewCA, OldCA string
}

// Input is what a controller read for the rotations of one object.
type Input struct {
	// Now is the time of the steps taken, to the second.
	Now metav1.Time
	// Generation is the object's, for the condition.
	Generation int64
	// Rotations are the object's status.rotations.
	Rotations []operatorv1alpha1.CARotationState
	// Issuer names an authority's Issuer, and its slot 0.
	Issuer func(pki.Authority) string
	// Object is the rotating object itself (Created unused), with the conditions just
	// observed; Owner is the same object as the owner of its slots.
	Object Member
	Owner  Owner
	// Wrote is how many objects the reconcile wrote to the host.
	Wrote int
	// Members are the objects the rotations wait for but those they exclude (WaitsFor): a
	// RootShard's Shards first, then its FrontProxies and VirtualWorkspaces.
	Members []Member
	// Signers are the root shard and its Shards, whose signing leaves' old slot goes with
	// the old service-account CA.
	Signers []Signer
	// Linked are the consumers the RootShard's Links report (LinkedOf): the rotations wait
	// for them as for members, by what they trust (UnsettledLinked).
	Linked []Linked
	// Reads are what the host shows of each rotation, by authority (ReadsFor).
	Reads map[pki.Authority]Read
}

// Reads says which facts of the host a rotation needs read; a fact not needed is not read.
type Reads struct {
	// Issuer is the authority's Issuer, whose certificates LeavesOnNew reads.
	Issuer string
	// Newest and Old are the Certificates and Secrets of the rotation's new and old slots.
	Newest, Old string
	// OldGone: whether the old slot is gone, once the old CA is dropped.
	OldGone bool
	// NewIssued: whether the newest slot is issued, while the rotation runs.
	NewIssued bool
	// LeavesOnNew: whether the Issuer's certificates come from the newest slot, once the
	// leaves switched, and once the newest slot is issued (what NewIssued read).
	LeavesOnNew bool
	// Fingerprints: the fingerprints of the CAs of Newest and Old, while the rotation runs
	// and linked consumers may wait for it.
	Fingerprints bool
	// SigningKeys are the shards whose new signing keys must be trusted, signed by the CA in
	// Newest (SigningKeysToTrust); nil when not needed.
	SigningKeys []string
}

// ReadsFor says what the controller reads of the host for the rotation st of in.
func ReadsFor(in Input, st operatorv1alpha1.CARotationState) Reads {
	issuer := in.Issuer(st.Authority)
	r := Reads{
		Issuer:      issuer,
		Newest:      pki.SlotName(issuer, st.Slot),
		Old:         pki.SlotName(issuer, pki.OtherSlot(st.Slot)),
		OldGone:     pki.OldDropped(&st),
		NewIssued:   Running(st),
		LeavesOnNew: Running(st) && st.LeavesSwitched,
	}
	if Running(st) {
		r.SigningKeys = SigningKeysToTrust(in, st)
		r.Fingerprints = len(in.Linked) > 0
	}
	return r
}

// SigningKeysToTrust are the shards (the root shard, then the Shards the rotation waits for)
// whose new signing keys must be trusted everywhere before the shards sign with them: while
// the service-account CA's rotation is Preparing and its leaves have not switched. Nil
// otherwise.
func SigningKeysToTrust(in Input, st operatorv1alpha1.CARotationState) []string {
	if st.Authority != pki.Authority(pki.ServiceAccountCA) || st.Phase != operatorv1alpha1.CARotationPreparing || st.LeavesSwitched {
		return nil
	}
	names := []string{in.Object.Name}
	for _, m := range in.Members {
		if m.Kind == "Shard" && WaitsFor(st, m) {
			names = append(names, m.Name)
		}
	}
	return names
}

// Step is a rotation that advanced, for the log: the Issuer of its authority and where it
// is now.
type Step struct {
	Issuer string
	Next   operatorv1alpha1.CARotationState
}

// Deletion is a slot, a Certificate and its Secret of one name, to delete as its owner's.
type Deletion struct {
	Slot  string
	Owner Owner
}

// Decisions are what the controller does for an object's rotations, in this order: delete
// OldSlots, write Rotations, delete OldSigningSlots, set or remove Condition.
type Decisions struct {
	// OldSlots are the old CA slots of the rotations the object says dropped them: the
	// object's desired CAs no longer hold them, and no reconcile of an older copy of it
	// applies them again.
	OldSlots []Deletion
	// Rotations are the next status.rotations: each running rotation a step further, when
	// the host allows it.
	Rotations []operatorv1alpha1.CARotationState
	// Steps are the rotations that advanced.
	Steps []Step
	// Waiting names, by authority, what each running rotation that did not advance waits
	// for (Waits).
	Waiting map[string][]string
	// OldSigningSlots are the old slots of the signing leaves, once the stored service-account
	// CA's rotation dropped the old CA: their keys verify nowhere any more.
	OldSigningSlots []Deletion
	// Condition is the condition CARotation; nil removes it (no rotation runs).
	Condition *metav1.Condition
}

// Decide takes each running rotation of in one step, when the host allows it, and names the
// slots to delete and what each rotation waits for.
func Decide(in Input) Decisions {
	d := Decisions{Waiting: map[string][]string{}}
	if len(in.Rotations) > 0 {
		d.Rotations = make([]operatorv1alpha1.CARotationState, len(in.Rotations))
	}
	for i, st := range in.Rotations {
		d.Rotations[i] = *st.DeepCopy()
		issuer := in.Issuer(st.Authority)
		reads := ReadsFor(in, st)
		read := in.Reads[st.Authority]
		unsettled := in.unsettled(st, read)
		o := Observation{Settled: len(unsettled) == 0}
		if reads.OldGone {
			d.OldSlots = append(d.OldSlots, Deletion{Slot: reads.Old, Owner: in.Owner})
			o.OldGone = read.OldGone
		}
		if !Running(st) {
			continue
		}
		o.NewIssued = read.NewIssued
		o.LeavesOnNew = reads.LeavesOnNew && read.NewIssued && read.LeavesOnNew
		next := Next(st, o, in.Now)
		if next.Phase != st.Phase || next.LeavesSwitched != st.LeavesSwitched || pki.OldDropped(&next) != pki.OldDropped(&st) {
			d.Steps = append(d.Steps, Step{Issuer: issuer, Next: next})
		} else if w := Waits(st, o, unsettled, issuer, reads.Newest, reads.Old); len(w) > 0 {
			d.Waiting[st.Authority] = w
		}
		d.Rotations[i] = next
	}
	if st := pki.RotationOf(in.Rotations, pki.Authority(pki.ServiceAccountCA)); st != nil && pki.OldDropped(st) {
		for _, s := range in.Signers {
			d.OldSigningSlots = append(d.OldSigningSlots, Deletion{Slot: pki.SlotName(s.Leaf, pki.OtherSlot(st.Slot)), Owner: s.Owner})
		}
	}
	if c, ok := Condition(in.Generation, d.Rotations, d.Waiting); ok {
		d.Condition = &c
	}
	return d
}

// unsettled names what keeps the rotation st from being settled: the reconcile's writes,
// the object itself, the members it waits for, before the shards sign with their new keys
// those keys, and the linked consumers it waits for.
func (in Input) unsettled(st operatorv1alpha1.CARotationState, read Read) []string {
	var out []string
	if in.Wrote > 0 {
		out = append(out, Writes)
	}
	if !meta.IsStatusConditionTrue(in.Object.Conditions, operatorv1alpha1.ConditionAvailable) {
		out = append(out, Unavailable(in.Object.Kind, in.Object.Namespace, in.Object.Name, in.Object.Conditions))
	}
	out = append(out, UnavailableMembers(st, in.Members)...)
	if SigningKeysToTrust(in, st) != nil && !read.SigningKeysTrusted {
		out = append(out, SigningKeys)
	}
	out = append(out, UnsettledLinked(st, in.Linked, read.OldCA, read.NewCA)...)
	return out
}
