package rotation

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestUnavailable: the member's kind, namespace and name, and its condition, its message
// cut short.
func TestUnavailable(t *testing.T) {
	cond := func(status metav1.ConditionStatus, reason, message string) []metav1.Condition {
		return []metav1.Condition{{Type: operatorv1alpha1.ConditionAvailable, Status: status, Reason: reason, Message: message}}
	}
	assert.Equal(t, "FrontProxy team-a/fp (Available=False, Unavailable: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector)",
		Unavailable("FrontProxy", "team-a", "fp", cond(metav1.ConditionFalse, "Unavailable", "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector")))
	assert.Equal(t, "Shard team-a/s (Available=Unknown, Pending)", Unavailable("Shard", "team-a", "s", cond(metav1.ConditionUnknown, "Pending", "")))
	assert.Equal(t, "VirtualWorkspace team-a/vw (no Available condition yet)", Unavailable("VirtualWorkspace", "team-a", "vw", nil))
	long := Unavailable("Shard", "team-a", "s", cond(metav1.ConditionFalse, "Rolling", strings.Repeat("é", 1000)))
	assert.Equal(t, "Shard team-a/s (Available=False, Rolling: "+strings.Repeat("é", maxConditionMessage)+"…)", long)
}

// TestWaitsFor has one row per rule: a rotation waits for a member unless it excludes it
// by kind and name, or the member was created after Start.
func TestWaitsFor(t *testing.T) {
	start := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(start.Add(d)) }
	st := func(members ...operatorv1alpha1.CARotationMember) operatorv1alpha1.CARotationState {
		initiated := metav1.NewTime(start)
		return operatorv1alpha1.CARotationState{Authority: "client", Phase: "Preparing", Slot: 1, LastInitiationTime: &initiated, ExcludedMembers: members}
	}
	fp := Member{Kind: "FrontProxy", Namespace: "team-a", Name: "fp", Created: at(-time.Hour)}
	tests := []struct {
		name   string
		st     operatorv1alpha1.CARotationState
		member Member
		waits  bool
	}{
		{name: "a member created before Start", st: st(), member: fp, waits: true},
		{name: "a member created in Start's second", st: st(), member: Member{Kind: "Shard", Name: "s", Created: at(0)}, waits: true},
		{name: "a member created after Start", st: st(), member: Member{Kind: "Shard", Name: "s", Created: at(time.Second)}},
		{name: "an excluded member", st: st(operatorv1alpha1.CARotationMember{Kind: "FrontProxy", Name: "fp"}), member: fp},
		{name: "a member of another kind by the excluded name", st: st(operatorv1alpha1.CARotationMember{Kind: "Shard", Name: "fp"}), member: fp, waits: true},
		{name: "another member", st: st(operatorv1alpha1.CARotationMember{Kind: "FrontProxy", Name: "other"}), member: fp, waits: true},
		{name: "a rotation without a Start time waits for every member",
			st: operatorv1alpha1.CARotationState{Authority: "client", Phase: "Preparing"}, member: Member{Kind: "Shard", Name: "s", Created: at(time.Hour)}, waits: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.waits, WaitsFor(tt.st, tt.member))
		})
	}

	available := []metav1.Condition{{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "Available"}}
	notAvailable := []metav1.Condition{{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionFalse, Reason: "Unavailable"}}
	members := []Member{
		{Kind: "Shard", Namespace: "team-a", Name: "up", Created: at(-time.Hour), Conditions: available},
		{Kind: "Shard", Namespace: "team-a", Name: "down", Created: at(-time.Hour), Conditions: notAvailable},
		{Kind: "FrontProxy", Namespace: "team-a", Name: "fp", Created: at(-time.Hour), Conditions: notAvailable},
		{Kind: "VirtualWorkspace", Namespace: "team-a", Name: "new", Created: at(time.Minute), Conditions: notAvailable},
	}
	assert.Equal(t, []string{"Shard team-a/down (Available=False, Unavailable)", "FrontProxy team-a/fp (Available=False, Unavailable)"},
		UnavailableMembers(st(), members))
	assert.Equal(t, []string{"Shard team-a/down (Available=False, Unavailable)"},
		UnavailableMembers(st(operatorv1alpha1.CARotationMember{Kind: "FrontProxy", Name: "fp"}), members))
}
