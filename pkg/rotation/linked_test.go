package rotation

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

var (
	oldFP = strings.Repeat("0a", 32)
	newFP = strings.Repeat("0b", 32)
)

// remote is the Shard b/s-1 of the Link eu-1, seen at 12:00, reporting trusted and served
// for the server CA.
func remote(trusted, served []string) Linked {
	return Linked{Link: "eu-1", Kind: "Shard", Namespace: "b", Name: "s-1", LastSeen: metav1.NewTime(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)),
		Trust: map[string]LinkedTrust{"server": {Trusted: trusted, Served: served}}}
}

// TestUnsettledLinked: one row per phase of a rotation of the server CA and per state a
// linked consumer reports; the wait names the consumer, its Link and when it was last seen.
func TestUnsettledLinked(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 28, 11, 0, 0, 0, time.UTC))
	st := func(phase operatorv1alpha1.CARotationPhase, switched, dropped bool, excluded ...operatorv1alpha1.CARotationMember) operatorv1alpha1.CARotationState {
		s := operatorv1alpha1.CARotationState{Authority: "server", Phase: phase, Slot: 1, LeavesSwitched: switched, LastInitiationTime: &at, ExcludedMembers: excluded}
		if dropped {
			s.LastCompletionTime = &at
		}
		return s
	}
	both, onlyOld, onlyNew := []string{oldFP, newFP}, []string{oldFP}, []string{newFP}
	const who = "Shard b/s-1 of Link eu-1 "
	const seen = " (last seen 2026-11-28T12:00:00Z)"
	for _, tc := range []struct {
		name   string
		st     operatorv1alpha1.CARotationState
		linked Linked
		oldCA  string
		want   string
	}{
		{"Preparing: trusts the old CA alone", st("Preparing", false, false), remote(onlyOld, onlyOld), oldFP, who + "to trust both server CAs" + seen},
		{"Preparing: trusts both", st("Preparing", false, false), remote(both, onlyOld), oldFP, ""},
		{"Preparing: trusts the new CA alone, not the old one its peers still present", st("Preparing", false, false), remote(onlyNew, onlyOld), oldFP, who + "to trust both server CAs" + seen},
		{"Preparing: its Link excluded", st("Preparing", false, false, operatorv1alpha1.CARotationMember{Kind: "Link", Name: "eu-1"}), remote(onlyOld, nil), oldFP, ""},
		{"Preparing: another Link excluded", st("Preparing", false, false, operatorv1alpha1.CARotationMember{Kind: "Link", Name: "eu-2"}), remote(onlyOld, nil), oldFP, who + "to trust both server CAs" + seen},
		{"Preparing: a Shard of the same name excluded is no Link", st("Preparing", false, false, operatorv1alpha1.CARotationMember{Kind: "Shard", Name: "eu-1"}), remote(onlyOld, nil), oldFP, who + "to trust both server CAs" + seen},
		{"Completing, leaves switched: serves from the old CA", st("Completing", true, false), remote(both, onlyOld), oldFP, who + "its certificates to come from the new server CA" + seen},
		{"Completing, leaves switched: serves from the new CA", st("Completing", true, false), remote(both, onlyNew), oldFP, ""},
		{"Completing, leaves switched: serves nothing of it", st("Completing", true, false), remote(both, nil), oldFP, ""},
		{"Completing, old CA dropped: still trusts it", st("Completing", true, true), remote(both, onlyNew), "", who + "to trust the new server CA alone" + seen},
		{"Completing, old CA dropped: trusts the new one alone", st("Completing", true, true), remote(onlyNew, onlyNew), "", ""},
		{"Prepared waits for a request, not for consumers", st("Prepared", false, false), remote(onlyOld, onlyOld), oldFP, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := UnsettledLinked(tc.st, []Linked{tc.linked}, tc.oldCA, newFP)
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.Equal(t, []string{tc.want}, got)
		})
	}
	noServer := remote(onlyOld, nil)
	noServer.Trust = map[string]LinkedTrust{"client": {Trusted: []string{oldFP}}}
	assert.Empty(t, UnsettledLinked(st("Preparing", false, false), []Linked{noServer}, oldFP, newFP), "a consumer that reports nothing of the CA uses none of it")
	assert.Empty(t, UnsettledLinked(st("Preparing", false, false), []Linked{remote(onlyOld, nil)}, oldFP, ""), "before the new CA is issued, the new CA's wait says it")
}

// TestDecideWaitsForLinkedConsumers: a rotation of the server CA stays Preparing, and says
// why, until the linked Shard reports trusting both CAs; then it becomes Prepared.
func TestDecideWaitsForLinkedConsumers(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 28, 11, 0, 0, 0, time.UTC))
	now := metav1.NewTime(at.Add(time.Hour))
	available := []metav1.Condition{{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "Available"}}
	in := func(linked Linked) Input {
		st := operatorv1alpha1.CARotationState{Authority: "server", Phase: "Preparing", Slot: 1, LastInitiationTime: &at}
		return Input{Now: now, Generation: 1, Rotations: []operatorv1alpha1.CARotationState{st},
			Issuer: func(a pki.Authority) string { return pki.RootShardIssuer("root", a) },
			Object: Member{Kind: "RootShard", Namespace: "a", Name: "root", Conditions: available},
			Linked: []Linked{linked},
			Reads:  map[pki.Authority]Read{"server": {NewIssued: true, NewCA: newFP, OldCA: oldFP}}}
	}
	assert.True(t, ReadsFor(in(remote(nil, nil)), in(remote(nil, nil)).Rotations[0]).Fingerprints, "linked consumers need the CAs' fingerprints")

	d := Decide(in(remote([]string{oldFP}, []string{oldFP})))
	require.Len(t, d.Rotations, 1)
	assert.Equal(t, operatorv1alpha1.CARotationPreparing, d.Rotations[0].Phase)
	assert.Equal(t, []string{"Shard b/s-1 of Link eu-1 to trust both server CAs (last seen 2026-11-28T12:00:00Z)"}, d.Waiting["server"])
	require.NotNil(t, d.Condition)
	assert.Contains(t, d.Condition.Message, "Shard b/s-1 of Link eu-1")

	d = Decide(in(remote([]string{oldFP, newFP}, []string{oldFP})))
	assert.Equal(t, operatorv1alpha1.CARotationPrepared, d.Rotations[0].Phase)
}

// TestLinkedOf: each consumer of each Link's status, by the Link's name, its trust by CA.
func TestLinkedOf(t *testing.T) {
	seen := metav1.NewTime(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	l := &operatorv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Name: "eu-1", Namespace: "a"}, Status: operatorv1alpha1.LinkStatus{
		Consumers: []operatorv1alpha1.LinkConsumerStatus{{Kind: "Shard", Namespace: "b", Name: "s-1", UID: "u", LastSeen: seen,
			Trust: []operatorv1alpha1.LinkConsumerCA{{CA: "server", Trusted: []string{oldFP}, Served: []string{oldFP}}}}}}}
	assert.Equal(t, []Linked{remote([]string{oldFP}, []string{oldFP})}, LinkedOf([]*operatorv1alpha1.Link{l, {ObjectMeta: metav1.ObjectMeta{Name: "eu-2"}}}))
}
