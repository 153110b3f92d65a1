package rotation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// TestNext has one case per step of the phases the controller takes, and per wait.
func TestNext(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	st := func(a string, phase operatorv1alpha1.CARotationPhase, switched bool) operatorv1alpha1.CARotationState {
		return operatorv1alpha1.CARotationState{Authority: a, Phase: phase, Slot: 1, LeavesSwitched: switched}
	}
	all := Observation{NewIssued: true, LeavesOnNew: true, Settled: true}
	earlier := metav1.NewTime(now.Add(-time.Minute))
	dropped := func(st operatorv1alpha1.CARotationState) operatorv1alpha1.CARotationState {
		st.LastCompletionTime = &earlier
		return st
	}
	tests := []struct {
		name     string
		in       operatorv1alpha1.CARotationState
		o        Observation
		phase    operatorv1alpha1.CARotationPhase
		switched bool
		dropped  bool
	}{
		{name: "Preparing waits for the new CA", in: st("client", "Preparing", false), o: Observation{Settled: true},
			phase: "Preparing"},
		{name: "Preparing waits for the bundles to settle", in: st("client", "Preparing", false), o: Observation{NewIssued: true},
			phase: "Preparing"},
		{name: "the client CA's leaves switch once the new CA is trusted", in: st("client", "Preparing", false), o: all,
			phase: "Preparing", switched: true},
		{name: "the client CA waits for its leaves", in: st("client", "Preparing", true), o: Observation{NewIssued: true, Settled: true},
			phase: "Preparing", switched: true},
		{name: "the client CA is Prepared once its leaves are new", in: st("client", "Preparing", true), o: all,
			phase: "Prepared", switched: true},
		{name: "the service-account CA's signing leaves switch during Start, their old keys kept until Complete",
			in: st("service-account", "Preparing", false), o: all, phase: "Preparing", switched: true},
		{name: "the service-account CA is Prepared once its leaves have new keys", in: st("service-account", "Preparing", true), o: all,
			phase: "Prepared", switched: true},
		{name: "the server CA is Prepared without switching", in: st("server", "Preparing", false), o: all,
			phase: "Prepared"},
		{name: "Prepared waits for Complete", in: st("server", "Prepared", false), o: all, phase: "Prepared"},
		{name: "the server CA's leaves switch at Complete", in: st("server", "Completing", false), o: all,
			phase: "Completing", switched: true},
		{name: "Completing waits for the new leaves", in: st("server", "Completing", true), o: Observation{NewIssued: true, Settled: true},
			phase: "Completing", switched: true},
		{name: "Completing waits to settle", in: st("server", "Completing", true), o: Observation{NewIssued: true, LeavesOnNew: true},
			phase: "Completing", switched: true},
		{name: "Completing drops the old CA once the leaves are new", in: st("client", "Completing", true), o: all,
			phase: "Completing", switched: true, dropped: true},
		{name: "the server CA's old CA is dropped once its leaves are new", in: st("server", "Completing", true), o: all,
			phase: "Completing", switched: true, dropped: true},
		{name: "a dropped CA waits for its Secret to go", in: dropped(st("client", "Completing", true)), o: all,
			phase: "Completing", switched: true, dropped: true},
		{name: "a dropped CA waits for the bundles without it to settle", in: dropped(st("client", "Completing", true)),
			o: Observation{NewIssued: true, LeavesOnNew: true, OldGone: true}, phase: "Completing", switched: true, dropped: true},
		{name: "Completing becomes Completed once the old CA is gone and the bundles settled", in: dropped(st("client", "Completing", true)),
			o: Observation{NewIssued: true, LeavesOnNew: true, Settled: true, OldGone: true}, phase: "Completed", switched: true, dropped: true},
		{name: "Completed stays", in: dropped(st("client", "Completed", true)), o: all, phase: "Completed", switched: true, dropped: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := Next(tt.in, tt.o, now)
			assertControllersStep(t, tt.in, next)
			assert.Equal(t, tt.phase, next.Phase)
			assert.Equal(t, tt.switched, next.LeavesSwitched)
			if next.Phase == "Prepared" && tt.in.Phase != "Prepared" {
				assert.Equal(t, &now, next.LastPreparedTime)
			}
			assert.Equal(t, tt.dropped, pki.OldDropped(&next), "the old CA is dropped")
			if tt.in.LastCompletionTime == nil && tt.dropped {
				assert.Equal(t, &now, next.LastCompletionTime, "when the old CA was dropped")
			}
		})
	}
}

// assertControllersStep asserts that the status API takes the step from in to next as one the
// server's controllers take (validation.RotationSteps), so that their writes pass it.
func assertControllersStep(t *testing.T, in, next operatorv1alpha1.CARotationState) {
	t.Helper()
	var before, after operator.CARotationState
	require.NoError(t, operatorv1alpha1.Convert_v1alpha1_CARotationState_To_operator_CARotationState(&in, &before, nil))
	require.NoError(t, operatorv1alpha1.Convert_v1alpha1_CARotationState_To_operator_CARotationState(&next, &after, nil))
	steps, errs := validation.RotationSteps([]operator.CARotationState{after}, []operator.CARotationState{before}, field.NewPath("status", "rotations"))
	require.Empty(t, errs, "the status API refuses the controllers' step")
	for _, s := range steps {
		assert.Equal(t, validation.RotationController, s.By)
	}
}

// TestWaits has one case per wait of Next: what it names is what holds the
// step back, and nothing once the step can be taken.
func TestWaits(t *testing.T) {
	st := func(a string, phase operatorv1alpha1.CARotationPhase, switched bool) operatorv1alpha1.CARotationState {
		return operatorv1alpha1.CARotationState{Authority: a, Phase: phase, Slot: 1, LeavesSwitched: switched}
	}
	dropped := func(st operatorv1alpha1.CARotationState) operatorv1alpha1.CARotationState {
		at := metav1.Now()
		st.LastCompletionTime = &at
		return st
	}
	fp := "FrontProxy team-a/fp (Available=False, Unavailable)"
	all := Observation{NewIssued: true, LeavesOnNew: true, Settled: true}
	newCA := "the new CA r-client-ca-next to be issued"
	leaves := "the certificates the Issuer r-client-ca signs to come from the new CA r-client-ca-next"
	tests := []struct {
		name string
		in   operatorv1alpha1.CARotationState
		o    Observation
		want []string
	}{
		{name: "Preparing: the new CA and a member", in: st("client", "Preparing", false), o: Observation{}, want: []string{newCA, fp}},
		{name: "Preparing: a member", in: st("client", "Preparing", false), o: Observation{NewIssued: true}, want: []string{fp}},
		{name: "Preparing: the leaves", in: st("client", "Preparing", true), o: Observation{NewIssued: true, Settled: true}, want: []string{leaves}},
		{name: "Preparing: the server CA waits for no leaves", in: st("server", "Preparing", false), o: Observation{NewIssued: true, Settled: true}},
		{name: "Preparing: nothing once it can switch", in: st("client", "Preparing", false), o: all},
		{name: "Prepared waits for a request", in: st("client", "Prepared", true), o: Observation{}},
		{name: "Completing: the leaves and a member", in: st("client", "Completing", true), o: Observation{NewIssued: true}, want: []string{leaves, fp}},
		{name: "Completing: the old CA and a member", in: dropped(st("client", "Completing", true)), o: Observation{NewIssued: true, LeavesOnNew: true},
			want: []string{"the old CA r-client-ca to be deleted", fp}},
		{name: "Completing: nothing once the old CA is gone and settled", in: dropped(st("client", "Completing", true)),
			o: Observation{NewIssued: true, LeavesOnNew: true, OldGone: true, Settled: true}},
		{name: "Completed waits for nothing", in: dropped(st("client", "Completed", true)), o: Observation{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var unsettled []string
			if !tt.o.Settled {
				unsettled = []string{fp}
			}
			got := Waits(tt.in, tt.o, unsettled, "r-client-ca", "r-client-ca-next", "r-client-ca")
			assert.Equal(t, tt.want, got)
			next := Next(tt.in, tt.o, metav1.Now())
			if len(got) > 0 {
				assert.Equal(t, tt.in, next, "a rotation that waits takes no step")
			}
		})
	}
}
