package rotation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// TestDecide has one row per phase change and per wait of docs/rotation.md: what the
// controller read (the rotation in status, its slots, the object and its members) and what
// Decide makes of it (the next rotation, the slots to delete, what it waits for, the
// condition).
func TestDecide(t *testing.T) {
	start := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	now := metav1.NewTime(start.Add(time.Hour))
	initiated := metav1.NewTime(start)
	earlier := metav1.NewTime(start.Add(time.Minute))
	st := func(a pki.Authority, phase operatorv1alpha1.CARotationPhase, switched bool, excluded ...operatorv1alpha1.CARotationMember) operatorv1alpha1.CARotationState {
		return operatorv1alpha1.CARotationState{Authority: a, Phase: phase, Slot: 1, LeavesSwitched: switched, LastInitiationTime: &initiated, ExcludedMembers: excluded}
	}
	dropped := func(st operatorv1alpha1.CARotationState) operatorv1alpha1.CARotationState {
		st.LastCompletionTime = &earlier
		return st
	}
	available := []metav1.Condition{{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "Available"}}
	rolling := []metav1.Condition{{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionFalse, Reason: "Rolling", Message: "1 of 2 replicas are updated"}}
	shard := func(name string, created time.Duration, conditions []metav1.Condition) Member {
		return Member{Kind: "Shard", Namespace: "team-a", Name: name, Created: metav1.NewTime(start.Add(created)), Conditions: conditions}
	}
	fp := Member{Kind: "FrontProxy", Namespace: "team-a", Name: "edge", Created: metav1.NewTime(start.Add(-time.Hour)), Conditions: rolling}
	const (
		fpWait       = "FrontProxy team-a/edge (Available=False, Rolling: 1 of 2 replicas are updated)"
		rootWait     = "RootShard team-a/root (Available=False, Rolling: 1 of 2 replicas are updated)"
		newClientCA  = "the new CA root-client-ca-next to be issued"
		clientLeaves = "the certificates the Issuer root-client-ca signs to come from the new CA root-client-ca-next"
		oldClientCA  = "the old CA root-client-ca to be deleted"
		prepared     = "the CAs %s are Prepared: every bundle trusts the old and the new CA; ask for phase Complete to drop the old ones"
	)
	issued := Read{NewIssued: true}
	onNew := Read{NewIssued: true, LeavesOnNew: true}
	owner := Owner{Kind: "rootshard", Name: "root", UID: "uid-root"}
	signers := []Signer{{Owner: owner, Leaf: "root-service-account"}, {Owner: Owner{Kind: "shard", Name: "s1", UID: "uid-s1"}, Leaf: "s1-service-account"}}

	tests := []struct {
		name string
		in   operatorv1alpha1.CARotationState
		read Read
		// the rest of what was read: by default the root shard Available, nothing written,
		// no members.
		wrote   int
		object  []metav1.Condition
		members []Member
		signers []Signer

		phase    operatorv1alpha1.CARotationPhase
		switched bool
		dropped  bool
		waits    []string
		oldSlots []string // the old CA slots to delete
		signing  []string // the old signing slots to delete
		message  string   // the condition's, "" when it is removed
	}{
		// Start: the rotation subresource set Preparing; the new CA is issued in slot 1.
		{name: "Start: Preparing waits for the new CA", in: st("client", "Preparing", false),
			phase: "Preparing", waits: []string{newClientCA}, message: "rotating the CAs client (Preparing, waiting for " + newClientCA + ")"},
		{name: "Start: Preparing waits for the last reconcile's writes", in: st("client", "Preparing", false), read: issued, wrote: 3,
			phase: "Preparing", waits: []string{Writes}, message: "rotating the CAs client (Preparing, waiting for " + Writes + ")"},
		{name: "Start: Preparing waits for the object to be Available", in: st("client", "Preparing", false), read: issued, object: rolling,
			phase: "Preparing", waits: []string{rootWait}, message: "rotating the CAs client (Preparing, waiting for " + rootWait + ")"},
		{name: "Start: Preparing waits for a member", in: st("client", "Preparing", false), read: issued, members: []Member{fp},
			phase: "Preparing", waits: []string{fpWait}, message: "rotating the CAs client (Preparing, waiting for " + fpWait + ")"},
		{name: "Start: the waits in order, the first three named", in: st("client", "Preparing", false), wrote: 1, object: rolling,
			members: []Member{fp, shard("s1", -time.Hour, rolling)},
			phase:   "Preparing", waits: []string{newClientCA, Writes, rootWait, fpWait, "Shard team-a/s1 (Available=False, Rolling: 1 of 2 replicas are updated)"},
			message: "rotating the CAs client (Preparing, waiting for " + newClientCA + ", " + Writes + ", " + rootWait + " and 2 more)"},
		// Excluded members.
		{name: "an excluded member is not waited for", in: st("client", "Preparing", false, operatorv1alpha1.CARotationMember{Kind: "FrontProxy", Name: "edge"}),
			read: issued, members: []Member{fp}, phase: "Preparing", switched: true, message: "rotating the CAs client (Preparing)"},
		{name: "a member of another kind by the excluded name is waited for", in: st("client", "Preparing", false, operatorv1alpha1.CARotationMember{Kind: "Shard", Name: "edge"}),
			read: issued, members: []Member{fp}, phase: "Preparing", waits: []string{fpWait}, message: "rotating the CAs client (Preparing, waiting for " + fpWait + ")"},
		{name: "a member created after Start is not waited for", in: st("client", "Preparing", false), read: issued,
			members: []Member{shard("late", time.Second, rolling)}, phase: "Preparing", switched: true, message: "rotating the CAs client (Preparing)"},
		{name: "a member created in Start's second is waited for", in: st("client", "Preparing", false), read: issued,
			members: []Member{shard("s1", 0, rolling)}, phase: "Preparing",
			waits:   []string{"Shard team-a/s1 (Available=False, Rolling: 1 of 2 replicas are updated)"},
			message: "rotating the CAs client (Preparing, waiting for Shard team-a/s1 (Available=False, Rolling: 1 of 2 replicas are updated))"},
		// Switching during Start: the client CA's leaves, then Prepared.
		{name: "the client CA's leaves switch once the new CA is trusted", in: st("client", "Preparing", false), read: issued,
			members: []Member{shard("s1", -time.Hour, available)}, phase: "Preparing", switched: true, message: "rotating the CAs client (Preparing)"},
		{name: "the client CA waits for its leaves to come from the new CA", in: st("client", "Preparing", true), read: issued,
			phase: "Preparing", switched: true, waits: []string{clientLeaves}, message: "rotating the CAs client (Preparing, waiting for " + clientLeaves + ")"},
		{name: "the client CA is Prepared once its leaves are new", in: st("client", "Preparing", true), read: onNew,
			phase: "Prepared", switched: true, message: "the CAs client are Prepared: every bundle trusts the old and the new CA; ask for phase Complete to drop the old ones"},
		{name: "the root CA is Prepared once the intermediates are issued again under it", in: st("root", "Preparing", true), read: onNew,
			phase: "Prepared", switched: true, message: "the CAs root are Prepared: every bundle trusts the old and the new CA; ask for phase Complete to drop the old ones"},
		// The server CA's leaves switch at Complete.
		{name: "the server CA is Prepared without switching", in: st("server", "Preparing", false), read: issued,
			phase: "Prepared", message: "the CAs server are Prepared: every bundle trusts the old and the new CA; ask for phase Complete to drop the old ones"},
		// The service-account keys.
		{name: "the shards sign with their new keys only once every key is trusted", in: st("service-account", "Preparing", false), read: issued,
			members: []Member{shard("s1", -time.Hour, available)}, phase: "Preparing", waits: []string{SigningKeys},
			message: "rotating the CAs service-account (Preparing, waiting for " + SigningKeys + ")"},
		{name: "the shards sign with their new keys once trusted", in: st("service-account", "Preparing", false),
			read: Read{NewIssued: true, SigningKeysTrusted: true}, phase: "Preparing", switched: true, message: "rotating the CAs service-account (Preparing)"},
		{name: "the service-account CA is Prepared once the signing leaves are new", in: st("service-account", "Preparing", true), read: onNew,
			phase: "Prepared", switched: true, message: "the CAs service-account are Prepared: every bundle trusts the old and the new CA; ask for phase Complete to drop the old ones"},
		// Prepared waits for a request.
		{name: "Prepared waits for Complete, whatever the host shows", in: st("client", "Prepared", true), wrote: 2, object: rolling, members: []Member{fp},
			phase: "Prepared", switched: true, message: "the CAs client are Prepared: every bundle trusts the old and the new CA; ask for phase Complete to drop the old ones"},
		// Complete.
		{name: "Complete: the server CA's leaves switch", in: st("server", "Completing", false), read: issued,
			phase: "Completing", switched: true, message: "rotating the CAs server (Completing)"},
		{name: "Completing waits for the new leaves and the members", in: st("client", "Completing", true), read: issued, members: []Member{fp},
			phase: "Completing", switched: true, waits: []string{clientLeaves, fpWait}, message: "rotating the CAs client (Completing, waiting for " + clientLeaves + ", " + fpWait + ")"},
		{name: "leaves read while the new CA is not issued count for nothing", in: st("client", "Completing", true), read: Read{LeavesOnNew: true},
			phase: "Completing", switched: true, waits: []string{clientLeaves}, message: "rotating the CAs client (Completing, waiting for " + clientLeaves + ")"},
		{name: "Completing drops the old CA once the leaves are new", in: st("client", "Completing", true), read: onNew,
			phase: "Completing", switched: true, dropped: true, message: "rotating the CAs client (Completing)"},
		{name: "a dropped CA's old slot is deleted, and waited for", in: dropped(st("client", "Completing", true)), read: onNew,
			phase: "Completing", switched: true, dropped: true, oldSlots: []string{"root-client-ca"}, waits: []string{oldClientCA},
			message: "rotating the CAs client (Completing, waiting for " + oldClientCA + ")"},
		{name: "a dropped CA waits for the bundles without it to settle", in: dropped(st("client", "Completing", true)),
			read: Read{NewIssued: true, LeavesOnNew: true, OldGone: true}, members: []Member{fp},
			phase: "Completing", switched: true, dropped: true, oldSlots: []string{"root-client-ca"}, waits: []string{fpWait},
			message: "rotating the CAs client (Completing, waiting for " + fpWait + ")"},
		{name: "an excluded member does not hold Completed", in: dropped(st("client", "Completing", true, operatorv1alpha1.CARotationMember{Kind: "FrontProxy", Name: "edge"})),
			read: Read{NewIssued: true, LeavesOnNew: true, OldGone: true}, members: []Member{fp},
			phase: "Completed", switched: true, dropped: true, oldSlots: []string{"root-client-ca"}},
		// Completed.
		{name: "Completed once the old CA is gone and the bundles settled", in: dropped(st("client", "Completing", true)),
			read: Read{NewIssued: true, LeavesOnNew: true, OldGone: true}, phase: "Completed", switched: true, dropped: true, oldSlots: []string{"root-client-ca"}},
		{name: "Completed stays, its old slot deleted should it come back", in: dropped(st("client", "Completed", true)), wrote: 1, object: rolling,
			phase: "Completed", switched: true, dropped: true, oldSlots: []string{"root-client-ca"}},
		{name: "the old signing slots go with the old service-account CA", in: dropped(st("service-account", "Completing", true)),
			read: Read{NewIssued: true, LeavesOnNew: true}, signers: signers,
			phase: "Completing", switched: true, dropped: true, oldSlots: []string{"root-service-account-ca"},
			signing: []string{"root-service-account", "s1-service-account"}, waits: []string{"the old CA root-service-account-ca to be deleted"},
			message: "rotating the CAs service-account (Completing, waiting for the old CA root-service-account-ca to be deleted)"},
		{name: "the signing slots stay until the old service-account CA is dropped", in: st("service-account", "Completing", true), read: onNew,
			signers: signers, phase: "Completing", switched: true, dropped: true, message: "rotating the CAs service-account (Completing)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			object := available
			if tt.object != nil {
				object = tt.object
			}
			in := Input{
				Now: now, Generation: 4, Rotations: []operatorv1alpha1.CARotationState{tt.in},
				Issuer: func(a pki.Authority) string { return pki.RootShardIssuer("root", a) },
				Object: Member{Kind: "RootShard", Namespace: "team-a", Name: "root", Conditions: object},
				Owner:  owner, Wrote: tt.wrote, Members: tt.members, Signers: tt.signers,
				Reads: map[pki.Authority]Read{tt.in.Authority: tt.read},
			}
			d := Decide(in)

			require.Len(t, d.Rotations, 1)
			next := d.Rotations[0]
			assertControllersStep(t, tt.in, next)
			assert.Equal(t, tt.phase, next.Phase)
			assert.Equal(t, tt.switched, next.LeavesSwitched)
			assert.Equal(t, tt.dropped, pki.OldDropped(&next), "the old CA is dropped")
			if next.Phase == "Prepared" && tt.in.Phase != "Prepared" {
				assert.Equal(t, &now, next.LastPreparedTime)
			}
			if tt.in.LastCompletionTime == nil && tt.dropped {
				assert.Equal(t, &now, next.LastCompletionTime, "when the old CA was dropped")
			}
			stepped := next.Phase != tt.in.Phase || next.LeavesSwitched != tt.in.LeavesSwitched || pki.OldDropped(&next) != pki.OldDropped(&tt.in)
			if stepped {
				assert.Equal(t, []Step{{Issuer: pki.RootShardIssuer("root", tt.in.Authority), Next: next}}, d.Steps)
			} else {
				assert.Empty(t, d.Steps)
			}
			assert.Equal(t, tt.waits, d.Waiting[tt.in.Authority], "what it waits for")
			if len(tt.waits) > 0 {
				assert.False(t, stepped, "a rotation that waits takes no step")
			}

			var oldSlots, signing []string
			for _, del := range d.OldSlots {
				assert.Equal(t, owner, del.Owner, "an old CA slot is deleted as the object's")
				oldSlots = append(oldSlots, del.Slot)
			}
			for i, del := range d.OldSigningSlots {
				assert.Equal(t, tt.signers[i].Owner, del.Owner, "an old signing slot is deleted as its shard's")
				signing = append(signing, del.Slot)
			}
			assert.Equal(t, tt.oldSlots, oldSlots, "the old CA slots deleted")
			assert.Equal(t, tt.signing, signing, "the old signing slots deleted")

			if tt.message == "" {
				assert.Nil(t, d.Condition, "the condition is removed")
				return
			}
			require.NotNil(t, d.Condition)
			assert.Equal(t, tt.message, d.Condition.Message)
			assert.Equal(t, int64(4), d.Condition.ObservedGeneration)
			assert.Equal(t, operatorv1alpha1.ConditionCARotation, d.Condition.Type)
		})
	}
}

// TestReadsFor: a rotation has read what its next step depends on, and nothing else: the
// newest slot while it runs, the Issuer's certificates once its leaves switched, the old
// slot once dropped, the signing keys of the shards it waits for before they switch.
func TestReadsFor(t *testing.T) {
	initiated := metav1.NewTime(time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC))
	at := metav1.NewTime(initiated.Add(time.Hour))
	in := Input{
		Issuer: func(a pki.Authority) string { return pki.RootShardIssuer("root", a) },
		Object: Member{Kind: "RootShard", Namespace: "team-a", Name: "root"},
		Members: []Member{
			{Kind: "Shard", Name: "s1", Created: metav1.NewTime(initiated.Add(-time.Hour))},
			{Kind: "Shard", Name: "excluded", Created: metav1.NewTime(initiated.Add(-time.Hour))},
			{Kind: "Shard", Name: "late", Created: metav1.NewTime(initiated.Add(time.Minute))},
			{Kind: "FrontProxy", Name: "edge", Created: metav1.NewTime(initiated.Add(-time.Hour))},
		},
	}
	excluded := []operatorv1alpha1.CARotationMember{{Kind: "Shard", Name: "excluded"}}
	tests := []struct {
		name string
		st   operatorv1alpha1.CARotationState
		want Reads
	}{
		{name: "Preparing", st: operatorv1alpha1.CARotationState{Authority: "client", Phase: "Preparing", Slot: 1},
			want: Reads{Issuer: "root-client-ca", Newest: "root-client-ca-next", Old: "root-client-ca", NewIssued: true}},
		{name: "Preparing, switched", st: operatorv1alpha1.CARotationState{Authority: "client", Phase: "Preparing", Slot: 0, LeavesSwitched: true},
			want: Reads{Issuer: "root-client-ca", Newest: "root-client-ca", Old: "root-client-ca-next", NewIssued: true, LeavesOnNew: true}},
		{name: "Prepared", st: operatorv1alpha1.CARotationState{Authority: "client", Phase: "Prepared", Slot: 1, LeavesSwitched: true},
			want: Reads{Issuer: "root-client-ca", Newest: "root-client-ca-next", Old: "root-client-ca"}},
		{name: "Completing, dropped", st: operatorv1alpha1.CARotationState{Authority: "root", Phase: "Completing", Slot: 1, LeavesSwitched: true, LastCompletionTime: &at},
			want: Reads{Issuer: "root-ca", Newest: "root-ca-next", Old: "root-ca", OldGone: true, NewIssued: true, LeavesOnNew: true}},
		{name: "Completed", st: operatorv1alpha1.CARotationState{Authority: "client", Phase: "Completed", Slot: 1, LeavesSwitched: true, LastCompletionTime: &at},
			want: Reads{Issuer: "root-client-ca", Newest: "root-client-ca-next", Old: "root-client-ca", OldGone: true}},
		{name: "the service-account CA before the shards switch",
			st: operatorv1alpha1.CARotationState{Authority: "service-account", Phase: "Preparing", Slot: 1, LastInitiationTime: &initiated, ExcludedMembers: excluded},
			want: Reads{Issuer: "root-service-account-ca", Newest: "root-service-account-ca-next", Old: "root-service-account-ca", NewIssued: true,
				SigningKeys: []string{"root", "s1"}}},
		{name: "the service-account CA once the shards switched",
			st:   operatorv1alpha1.CARotationState{Authority: "service-account", Phase: "Preparing", Slot: 1, LeavesSwitched: true, LastInitiationTime: &initiated},
			want: Reads{Issuer: "root-service-account-ca", Newest: "root-service-account-ca-next", Old: "root-service-account-ca", NewIssued: true, LeavesOnNew: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ReadsFor(in, tt.st))
		})
	}
}
