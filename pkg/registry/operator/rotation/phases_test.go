package rotation

import (
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
