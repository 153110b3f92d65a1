package validation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// TestRotationSteps: one row per step of a rotation and who takes it, and one per change of
// status.rotations that is no step, which is a 422 at status.rotations[i].phase.
func TestRotationSteps(t *testing.T) {
	at := &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	later := &metav1.Time{Time: at.Add(time.Minute)}
	st := func(phase operator.CARotationPhase, slot int32, change ...func(*operator.CARotationState)) operator.CARotationState {
		s := operator.CARotationState{Authority: "client", Phase: phase, Slot: slot, LastInitiationTime: at}
		for _, c := range change {
			c(&s)
		}
		return s
	}
	switched := func(s *operator.CARotationState) { s.LeavesSwitched = true }
	prepared := func(s *operator.CARotationState) { s.LastPreparedTime = at }
	triggered := func(s *operator.CARotationState) { s.LastCompletionTriggeredTime = at }
	dropped := func(s *operator.CARotationState) { s.LastCompletionTime = at }
	none := []operator.CARotationState(nil)
	fp := operator.CARotationMember{Kind: "FrontProxy", Name: "stuck"}
	vw := operator.CARotationMember{Kind: "VirtualWorkspace", Name: "vw"}
	excl := func(m ...operator.CARotationMember) func(*operator.CARotationState) {
		return func(s *operator.CARotationState) { s.ExcludedMembers = m }
	}
	one := func(s operator.CARotationState) []operator.CARotationState { return []operator.CARotationState{s} }

	for _, tc := range []struct {
		name     string
		old, new []operator.CARotationState
		// by is who may take the step; empty with invalid false: nothing changed.
		by      RotationActor
		invalid bool
	}{
		{"nothing changes", one(st(operator.CARotationPreparing, 1)), one(st(operator.CARotationPreparing, 1)), "", false},
		{"Start of a first rotation", none, one(st(operator.CARotationPreparing, 1)), RotationRequest, false},
		{"Start after a Completed one, in the other slot", one(st(operator.CARotationCompleted, 1, switched, prepared, triggered, dropped)),
			one(operator.CARotationState{Authority: "client", Phase: operator.CARotationPreparing, Slot: 0, LastInitiationTime: later}), RotationRequest, false},
		{"Complete of a Prepared one", one(st(operator.CARotationPrepared, 1, switched, prepared)),
			one(st(operator.CARotationCompleting, 1, switched, prepared, triggered)), RotationRequest, false},
		{"the leaves switch while Preparing", one(st(operator.CARotationPreparing, 1)), one(st(operator.CARotationPreparing, 1, switched)), RotationController, false},
		{"Preparing becomes Prepared", one(st(operator.CARotationPreparing, 1, switched)),
			one(st(operator.CARotationPrepared, 1, switched, prepared)), RotationController, false},
		{"the server CA's leaves switch while Completing", one(st(operator.CARotationCompleting, 1, prepared, triggered)),
			one(st(operator.CARotationCompleting, 1, prepared, triggered, switched)), RotationController, false},
		{"the old CA is dropped", one(st(operator.CARotationCompleting, 1, switched, prepared, triggered)),
			one(st(operator.CARotationCompleting, 1, switched, prepared, triggered, dropped)), RotationController, false},
		{"Completing becomes Completed", one(st(operator.CARotationCompleting, 1, switched, prepared, triggered, dropped)),
			one(st(operator.CARotationCompleted, 1, switched, prepared, triggered, dropped)), RotationController, false},

		// Members excluded from the wait: only the rotation subresource adds them, and never
		// takes one back.
		{"Start excluding a member", none, one(st(operator.CARotationPreparing, 1, excl(fp))), RotationRequest, false},
		{"a member excluded while Preparing", one(st(operator.CARotationPreparing, 1)), one(st(operator.CARotationPreparing, 1, excl(fp))), RotationRequest, false},
		{"a second member excluded while Prepared", one(st(operator.CARotationPrepared, 1, switched, prepared, excl(fp))),
			one(st(operator.CARotationPrepared, 1, switched, prepared, excl(fp, vw))), RotationRequest, false},
		{"Complete excluding a member", one(st(operator.CARotationPrepared, 1, switched, prepared)),
			one(st(operator.CARotationCompleting, 1, switched, prepared, triggered, excl(fp))), RotationRequest, false},
		{"a member excluded while Completing", one(st(operator.CARotationCompleting, 1, switched, prepared, triggered)),
			one(st(operator.CARotationCompleting, 1, switched, prepared, triggered, excl(fp))), RotationRequest, false},
		{"an exclusion taken back", one(st(operator.CARotationPreparing, 1, excl(fp))), one(st(operator.CARotationPreparing, 1)), "", true},
		{"an exclusion replaced", one(st(operator.CARotationPreparing, 1, excl(fp))), one(st(operator.CARotationPreparing, 1, excl(vw))), "", true},
		{"a member excluded with a controllers' step", one(st(operator.CARotationPreparing, 1)), one(st(operator.CARotationPreparing, 1, switched, excl(fp))), "", true},
		{"a member excluded from a Completed one", one(st(operator.CARotationCompleted, 1, switched, prepared, triggered, dropped)),
			one(st(operator.CARotationCompleted, 1, switched, prepared, triggered, dropped, excl(fp))), "", true},
		{"Complete taking an exclusion back", one(st(operator.CARotationPrepared, 1, switched, prepared, excl(fp))),
			one(st(operator.CARotationCompleting, 1, switched, prepared, triggered)), "", true},
		{"Preparing to Completing", one(st(operator.CARotationPreparing, 1)), one(st(operator.CARotationCompleting, 1, triggered)), "", true},
		{"Preparing to Completed", one(st(operator.CARotationPreparing, 1)), one(st(operator.CARotationCompleted, 1)), "", true},
		{"a slot flips while Preparing", one(st(operator.CARotationPreparing, 1)), one(st(operator.CARotationPreparing, 0)), "", true},
		{"a slot flips while Prepared", one(st(operator.CARotationPrepared, 1, switched, prepared)),
			one(st(operator.CARotationPrepared, 0, switched, prepared)), "", true},
		{"a slot flips when Completed", one(st(operator.CARotationCompleted, 1, switched, dropped)),
			one(st(operator.CARotationCompleted, 0, switched, dropped)), "", true},
		{"the old CA is dropped before the leaves switched", one(st(operator.CARotationCompleting, 1, triggered)),
			one(st(operator.CARotationCompleting, 1, triggered, dropped)), "", true},
		{"the old CA is dropped while Preparing", one(st(operator.CARotationPreparing, 1, switched)),
			one(st(operator.CARotationPreparing, 1, switched, dropped)), "", true},
		{"Completed before the old CA is dropped", one(st(operator.CARotationCompleting, 1, switched, triggered)),
			one(st(operator.CARotationCompleted, 1, switched, triggered)), "", true},
		{"two steps at once", one(st(operator.CARotationPreparing, 1)), one(st(operator.CARotationPrepared, 1, switched, prepared)), "", true},
		{"Prepared back to Preparing", one(st(operator.CARotationPrepared, 1, switched, prepared)), one(st(operator.CARotationPreparing, 1, switched, prepared)), "", true},
		{"Start in slot 0 first", none, one(st(operator.CARotationPreparing, 0)), "", true},
		{"Start in the same slot again", one(st(operator.CARotationCompleted, 1, switched, dropped)),
			one(operator.CARotationState{Authority: "client", Phase: operator.CARotationPreparing, Slot: 1, LastInitiationTime: later}), "", true},
		{"a new entry in another phase", none, one(st(operator.CARotationCompleted, 1)), "", true},
		{"a new entry with the leaves switched", none, one(st(operator.CARotationPreparing, 1, switched)), "", true},
		{"Start of a running one", one(st(operator.CARotationPreparing, 1)),
			one(operator.CARotationState{Authority: "client", Phase: operator.CARotationPreparing, Slot: 0, LastInitiationTime: later}), "", true},
		{"an entry removed", one(st(operator.CARotationPreparing, 1)), none, "", true},
		{"the leaves unswitched", one(st(operator.CARotationPreparing, 1, switched)), one(st(operator.CARotationPreparing, 1)), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := field.NewPath("status", "rotations")
			steps, errs := RotationSteps(tc.new, tc.old, path)
			if tc.invalid {
				require.Len(t, errs, 1, "steps: %v", steps)
				assert.Equal(t, "status.rotations[0].phase", errs[0].Field)
				assert.Equal(t, field.ErrorTypeInvalid, errs[0].Type)
				assert.Empty(t, steps)
				return
			}
			require.Empty(t, errs)
			if tc.by == "" {
				assert.Empty(t, steps)
				return
			}
			require.Len(t, steps, 1)
			assert.Equal(t, tc.by, steps[0].By)
			assert.Equal(t, "status.rotations[0].phase", steps[0].Path.String())
			assert.Equal(t, "client", steps[0].Authority)
		})
	}
}
