package rotation

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
)

var now = time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)

func state(a string, phase operator.CARotationPhase, slot int32) operator.CARotationState {
	return operator.CARotationState{Authority: a, Phase: phase, Slot: slot}
}

// TestApply has one case per step of each phase, and per refusal.
func TestApply(t *testing.T) {
	start := func(a ...string) operator.CARotationSpec {
		return operator.CARotationSpec{Authorities: a, Phase: operator.CARotationStart}
	}
	complete := func(a ...string) operator.CARotationSpec {
		return operator.CARotationSpec{Authorities: a, Phase: operator.CARotationComplete}
	}
	tests := []struct {
		name      string
		current   []operator.CARotationState
		spec      operator.CARotationSpec
		want      []operator.CARotationState // phases and slots
		changed   bool
		conflicts []string
	}{
		{name: "first Start issues slot 1", spec: start("server", "client"),
			want:    []operator.CARotationState{state("client", "Preparing", 1), state("server", "Preparing", 1)},
			changed: true},
		{name: "Start after Completed takes the other slot", current: []operator.CARotationState{state("client", "Completed", 1)},
			spec: start("client"), want: []operator.CARotationState{state("client", "Preparing", 0)}, changed: true},
		{name: "Start while Preparing or Prepared changes nothing",
			current: []operator.CARotationState{state("client", "Preparing", 1), state("server", "Prepared", 1)},
			spec:    start("client", "server"),
			want:    []operator.CARotationState{state("client", "Preparing", 1), state("server", "Prepared", 1)}},
		{name: "Start while Completing is refused", current: []operator.CARotationState{state("client", "Completing", 1)},
			spec: start("client"), conflicts: []string{"the rotation of the client CA is Completing"}},
		{name: "Complete when Prepared", current: []operator.CARotationState{state("server", "Prepared", 1)},
			spec: complete("server"), want: []operator.CARotationState{state("server", "Completing", 1)}, changed: true},
		{name: "Complete again changes nothing",
			current: []operator.CARotationState{state("server", "Completing", 1), state("client", "Completed", 0)},
			spec:    complete("server", "client"),
			want:    []operator.CARotationState{state("client", "Completed", 0), state("server", "Completing", 1)}},
		{name: "Complete before Prepared is refused", current: []operator.CARotationState{state("server", "Preparing", 1)},
			spec: complete("server"), conflicts: []string{"the rotation of the server CA is Preparing", "ask again once status.rotations says Prepared"}},
		{name: "Complete without Start is refused", spec: complete("client"),
			conflicts: []string{"no rotation of the client CA was started"}},
		{name: "all or nothing: one authority not Prepared holds back the other",
			current: []operator.CARotationState{state("server", "Prepared", 1), state("client", "Preparing", 1)},
			spec:    complete("server", "client"), conflicts: []string{"the rotation of the client CA is Preparing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before []operator.CARotationState
			for _, c := range tt.current {
				before = append(before, *c.DeepCopy())
			}
			got, changed, err := Apply(tt.current, tt.spec, now)
			assert.Equal(t, before, tt.current, "the current rotations are not changed in place")
			if len(tt.conflicts) > 0 {
				var conflict *PhaseConflictError
				require.ErrorAs(t, err, &conflict)
				for _, c := range tt.conflicts {
					assert.Contains(t, err.Error(), c)
				}
				assert.False(t, changed)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.changed, changed)
			// The status API takes each step as the rotation subresource's.
			steps, errs := validation.RotationSteps(got, before, field.NewPath("status", "rotations"))
			require.Empty(t, errs, "the status API refuses the subresource's step")
			assert.Equal(t, tt.changed, len(steps) > 0)
			for _, s := range steps {
				assert.Equal(t, validation.RotationRequest, s.By, s.Authority)
			}
			require.Len(t, got, len(tt.want))
			for i, w := range tt.want {
				assert.Equal(t, w.Authority, got[i].Authority)
				assert.Equal(t, w.Phase, got[i].Phase, w.Authority)
				assert.Equal(t, w.Slot, got[i].Slot, w.Authority)
			}
		})
	}
}

// TestApplyTimes checks the times each step records.
func TestApplyTimes(t *testing.T) {
	started, _, err := Apply(nil, operator.CARotationSpec{Authorities: []string{"client"}, Phase: operator.CARotationStart}, now)
	require.NoError(t, err)
	require.NotNil(t, started[0].LastInitiationTime)
	assert.True(t, started[0].LastInitiationTime.Time.Equal(now))
	assert.Nil(t, started[0].LastCompletionTriggeredTime)

	started[0].Phase = operator.CARotationPrepared
	later := now.Add(time.Hour)
	completing, _, err := Apply(started, operator.CARotationSpec{Authorities: []string{"client"}, Phase: operator.CARotationComplete}, later)
	require.NoError(t, err)
	require.NotNil(t, completing[0].LastCompletionTriggeredTime)
	assert.True(t, completing[0].LastCompletionTriggeredTime.Time.Equal(later))
	assert.True(t, completing[0].LastInitiationTime.Time.Equal(now), "the initiation time stays")
}

// TestApplyExcludeMembers has one case per phase a request with excludeMembers meets.
func TestApplyExcludeMembers(t *testing.T) {
	fp := operator.CARotationMember{Kind: "FrontProxy", Name: "fp"}
	shard := operator.CARotationMember{Kind: "Shard", Name: "s"}
	with := func(st operator.CARotationState, members ...operator.CARotationMember) operator.CARotationState {
		st.ExcludedMembers = members
		return st
	}
	req := func(phase operator.CARotationRequestPhase, members ...operator.CARotationMember) operator.CARotationSpec {
		return operator.CARotationSpec{Authorities: []string{"client"}, Phase: phase, ExcludeMembers: members}
	}
	tests := []struct {
		name      string
		current   []operator.CARotationState
		spec      operator.CARotationSpec
		phase     operator.CARotationPhase
		excluded  []operator.CARotationMember
		changed   bool
		conflicts []string
	}{
		{name: "Start records them", spec: req(operator.CARotationStart, shard, fp),
			phase: "Preparing", excluded: []operator.CARotationMember{fp, shard}, changed: true},
		{name: "Start while Preparing adds them", current: []operator.CARotationState{with(state("client", "Preparing", 1), shard)},
			spec: req(operator.CARotationStart, fp), phase: "Preparing", excluded: []operator.CARotationMember{fp, shard}, changed: true},
		{name: "Start while Prepared adds them", current: []operator.CARotationState{state("client", "Prepared", 1)},
			spec: req(operator.CARotationStart, fp), phase: "Prepared", excluded: []operator.CARotationMember{fp}, changed: true},
		{name: "Start again with the same members changes nothing", current: []operator.CARotationState{with(state("client", "Preparing", 1), fp)},
			spec: req(operator.CARotationStart, fp), phase: "Preparing", excluded: []operator.CARotationMember{fp}},
		{name: "a new rotation forgets the last one's", current: []operator.CARotationState{with(state("client", "Completed", 1), shard)},
			spec: req(operator.CARotationStart, fp), phase: "Preparing", excluded: []operator.CARotationMember{fp}, changed: true},
		{name: "a new rotation without members excludes none", current: []operator.CARotationState{with(state("client", "Completed", 1), shard)},
			spec: req(operator.CARotationStart), phase: "Preparing", changed: true},
		{name: "Complete records them", current: []operator.CARotationState{with(state("client", "Prepared", 1), shard)},
			spec: req(operator.CARotationComplete, fp), phase: "Completing", excluded: []operator.CARotationMember{fp, shard}, changed: true},
		{name: "Complete while Completing adds them", current: []operator.CARotationState{state("client", "Completing", 1)},
			spec: req(operator.CARotationComplete, fp), phase: "Completing", excluded: []operator.CARotationMember{fp}, changed: true},
		{name: "Complete of a Completed rotation records nothing", current: []operator.CARotationState{state("client", "Completed", 1)},
			spec: req(operator.CARotationComplete, fp), phase: "Completed"},
		{name: "Start while Completing is still refused", current: []operator.CARotationState{state("client", "Completing", 1)},
			spec: req(operator.CARotationStart, fp), conflicts: []string{"the rotation of the client CA is Completing"}},
		{name: "Complete while Preparing is still refused", current: []operator.CARotationState{state("client", "Preparing", 1)},
			spec: req(operator.CARotationComplete, fp), conflicts: []string{"the rotation of the client CA is Preparing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed, err := Apply(tt.current, tt.spec, now)
			if len(tt.conflicts) > 0 {
				var conflict *PhaseConflictError
				require.ErrorAs(t, err, &conflict)
				for _, c := range tt.conflicts {
					assert.Contains(t, err.Error(), c)
				}
				return
			}
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, tt.changed, changed)
			assert.Equal(t, tt.phase, got[0].Phase)
			assert.Equal(t, tt.excluded, got[0].ExcludedMembers)
			// The status API takes each step as the rotation subresource's, and only as its.
			steps, errs := validation.RotationSteps(got, tt.current, field.NewPath("status", "rotations"))
			require.Empty(t, errs, "the status API refuses the subresource's step")
			assert.Equal(t, tt.changed, len(steps) > 0)
			for _, s := range steps {
				assert.Equal(t, validation.RotationRequest, s.By, s.Authority)
			}
		})
	}

	// The total is bounded, whatever the requests.
	var current []operator.CARotationMember
	for i := range validation.MaxExcludedMembers {
		current = append(current, operator.CARotationMember{Kind: "Shard", Name: fmt.Sprintf("s-%02d", i)})
	}
	_, changed, err := Apply([]operator.CARotationState{with(state("client", "Preparing", 1), current...)}, req(operator.CARotationStart, fp), now)
	var conflict *PhaseConflictError
	require.ErrorAs(t, err, &conflict)
	assert.Contains(t, err.Error(), "would exclude 33 members from its wait, more than 32")
	assert.False(t, changed)
}
