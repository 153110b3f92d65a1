// Package rotation decides the steps of the CA rotations (docs/rotation.md): from what a
// controller read (the rotations in status, the slots' Certificates and Secrets, the
// members' states), it returns what to do (switch the leaves, drop the old CA, delete its
// slot, complete) and what each rotation waits for. It does no I/O and reads no clock: the
// controllers gather the reads through the Host and act on the decisions.
package rotation

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Observation is what the host shows of one authority's rotation.
type Observation struct {
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

// SwitchesLeavesAtComplete reports whether the leaves of a switch to the new CA only at
// Complete: serving certificates, which every client must have had the time to trust the new
// CA for, as Gardener rotates a cluster's server CA. Every other authority's leaves switch
// once the new CA is trusted everywhere, during Start; the service-account CA's among them,
// where the switch is the shards' signing with their leaves' new slot (pki.SigningSlots),
// once every verifier trusts its key.
func SwitchesLeavesAtComplete(a pki.Authority) bool {
	return a == pki.Authority(pki.ServerCA) || a == pki.CacheAuthority
}

// Running reports whether the rotation st takes steps of its own: Preparing and Completing.
// Prepared and Completed wait for a request.
func Running(st operatorv1alpha1.CARotationState) bool {
	return st.Phase == operatorv1alpha1.CARotationPreparing || st.Phase == operatorv1alpha1.CARotationCompleting
}

// Next is one step of an authority's rotation, from what the host shows: Preparing becomes
// Prepared once the new CA is issued and trusted everywhere, and, for an authority whose
// leaves switch at Start, once they did; Completing switches the leaves of the others (the
// server CA's), then, once every leaf comes from the new CA, drops the old CA
// (LastCompletionTime, pki.OldDropped), and becomes Completed once the old CA is deleted and
// the bundles without it are in the pods. Prepared and Completed wait for a request. The old
// slot is deleted only once the object says it dropped it (Decide), so that no reconcile of
// an older copy of the object applies it again.
func Next(st operatorv1alpha1.CARotationState, o Observation, now metav1.Time) operatorv1alpha1.CARotationState {
	next := *st.DeepCopy()
	switch st.Phase {
	case operatorv1alpha1.CARotationPreparing:
		switch {
		case !o.NewIssued || !o.Settled:
		case SwitchesLeavesAtComplete(st.Authority):
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

// Waits names what the rotation st waits for before Next takes its next step, from the same
// observation; unsettled names what keeps o from being Settled (the object, its members).
// issuer is the authority's Issuer, newest and old its slots. Prepared and Completed wait for
// a request, not for the host: nothing.
func Waits(st operatorv1alpha1.CARotationState, o Observation, unsettled []string, issuer, newest, old string) []string {
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
		if o.NewIssued && o.Settled && st.LeavesSwitched && !SwitchesLeavesAtComplete(st.Authority) {
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
