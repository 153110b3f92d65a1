package rotation

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// setCondition sets Condition in conditions as the controllers do, or removes it.
func setCondition(conditions *[]metav1.Condition, generation int64, rotations []operatorv1alpha1.CARotationState, waiting map[string][]string) {
	if c, ok := Condition(generation, rotations, waiting); ok {
		meta.SetStatusCondition(conditions, c)
		return
	}
	meta.RemoveStatusCondition(conditions, operatorv1alpha1.ConditionCARotation)
}

func TestCondition(t *testing.T) {
	var conds []metav1.Condition
	setCondition(&conds, 1, []operatorv1alpha1.CARotationState{{Authority: "server", Phase: "Prepared"}, {Authority: "client", Phase: "Preparing"}}, nil)
	assert.Equal(t, metav1.ConditionFalse, conds[0].Status)
	assert.Equal(t, operatorv1alpha1.ReasonRotating, conds[0].Reason)
	assert.Equal(t, "rotating the CAs client (Preparing)", conds[0].Message)
	setCondition(&conds, 1, []operatorv1alpha1.CARotationState{{Authority: "server", Phase: "Prepared"}, {Authority: "client", Phase: "Prepared"}}, nil)
	assert.Equal(t, metav1.ConditionTrue, conds[0].Status)
	assert.Equal(t, operatorv1alpha1.ReasonWaitingForComplete, conds[0].Reason)
	assert.Contains(t, conds[0].Message, "client, server")
	setCondition(&conds, 1, []operatorv1alpha1.CARotationState{{Authority: "server", Phase: "Completed"}}, nil)
	assert.Empty(t, conds)
}

// TestRotationConditionNamesWhatItWaitsFor: each running rotation names its first waits and
// counts the others; the message stays bounded however many members wait.
func TestRotationConditionNamesWhatItWaitsFor(t *testing.T) {
	var many []string
	for i := range 500 {
		many = append(many, Unavailable("Shard", "team-a", fmt.Sprintf("shard-%d", i),
			[]metav1.Condition{{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionFalse, Reason: "Rolling", Message: strings.Repeat("x", 5000)}}))
	}
	tests := []struct {
		name    string
		waiting map[string][]string
		want    string
	}{
		{name: "nothing named", want: "rotating the CAs client (Preparing); server (Completing)"},
		{name: "one wait", waiting: map[string][]string{"client": {"FrontProxy team-a/fp (Available=False, Unschedulable: no node)"}},
			want: "rotating the CAs client (Preparing, waiting for FrontProxy team-a/fp (Available=False, Unschedulable: no node)); server (Completing)"},
		{name: "each rotation its own", waiting: map[string][]string{"client": {"a", "b", "c"}, "server": {"the old CA root-server-ca to be deleted"}},
			want: "rotating the CAs client (Preparing, waiting for a, b, c); server (Completing, waiting for the old CA root-server-ca to be deleted)"},
		{name: "the first few and a count", waiting: map[string][]string{"client": {"a", "b", "c", "d", "e"}},
			want: "rotating the CAs client (Preparing, waiting for a, b, c and 2 more); server (Completing)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var conds []metav1.Condition
			setCondition(&conds, 1, []operatorv1alpha1.CARotationState{{Authority: "server", Phase: "Completing"}, {Authority: "client", Phase: "Preparing"}}, tt.waiting)
			require.Len(t, conds, 1)
			assert.Equal(t, tt.want, conds[0].Message)
		})
	}
	var conds []metav1.Condition
	setCondition(&conds, 1, []operatorv1alpha1.CARotationState{{Authority: "client", Phase: "Preparing"}, {Authority: "server", Phase: "Preparing"}},
		map[string][]string{"client": many, "server": many})
	assert.Less(t, len(conds[0].Message), 1500, "bounded: %d", len(conds[0].Message))
	assert.Contains(t, conds[0].Message, "and 497 more")
}
