package integration

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestStatusWriteRules are the rules the status subresource holds every writer to, whoever
// the writer is: a TakenOver condition, once stored, is kept as recorded, and a write that is
// no step of a rotation is a 422 at the rotation's phase. (Who may take which step is the
// requester's identity, which this tier does not authenticate: the end-to-end
// TestStatusAndEtcdVolumesAreHeldToRights has a status writer refused the controllers' steps.)
func TestStatusWriteRules(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	rootShards := s.client.OperatorV1alpha1().RootShards(namespace)

	t.Run("TakenOver stays recorded", func(t *testing.T) {
		ctx := t.Context()
		rs, err := rootShards.Create(ctx, newRootShard("taken"), metav1.CreateOptions{})
		require.NoError(t, err)
		// As the controllers record the end of a takeover.
		meta.SetStatusCondition(&rs.Status.Conditions, metav1.Condition{Type: operatorv1alpha1.ConditionTakenOver, Status: metav1.ConditionTrue,
			Reason: operatorv1alpha1.ReasonTakenOverFromKcpOperator, Message: "taken over from kcp-operator", ObservedGeneration: rs.Generation})
		rs, err = rootShards.UpdateStatus(ctx, rs, metav1.UpdateOptions{})
		require.NoError(t, err)
		recorded := meta.FindStatusCondition(rs.Status.Conditions, operatorv1alpha1.ConditionTakenOver)
		require.NotNil(t, recorded)
		require.Equal(t, metav1.ConditionTrue, recorded.Status)

		for _, patch := range []string{
			`{"status":{"conditions":[]}}`,
			`{"status":{"conditions":[{"type":"TakenOver","status":"False","reason":"Reset","message":"x","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`,
		} {
			_, err := rootShards.Patch(ctx, "taken", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
			require.NoError(t, err, "the status endpoint takes the write %s", patch)
			stored, err := rootShards.Get(ctx, "taken", metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, recorded, meta.FindStatusCondition(stored.Status.Conditions, operatorv1alpha1.ConditionTakenOver),
				"TakenOver is kept as recorded after %s", patch)
		}
	})

	t.Run("a write that is no step of a rotation is refused", func(t *testing.T) {
		ctx := t.Context()
		_, err := rootShards.Create(ctx, newRootShard("rotating"), metav1.CreateOptions{})
		require.NoError(t, err)
		// Start, as the rotation subresource takes it: the client CA's rotation is Preparing,
		// its new CA in slot 1.
		started, err := rootShards.Rotate(ctx, "rotating", &operatorv1alpha1.CARotation{Spec: operatorv1alpha1.CARotationSpec{
			Phase: operatorv1alpha1.CARotationStart, Authorities: []string{"client"}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		require.Len(t, started.Status.Rotations, 1)
		require.Equal(t, operatorv1alpha1.CARotationPreparing, started.Status.Rotations[0].Phase)
		before, err := rootShards.Get(ctx, "rotating", metav1.GetOptions{})
		require.NoError(t, err)

		for _, tc := range []struct{ name, patch, says string }{
			{"Preparing to Completing, past Prepared and the 409 of Complete",
				`[{"op":"replace","path":"/status/rotations/0/phase","value":"Completing"}]`,
				`status.rotations[0].phase: Invalid value: "Completing": the rotation of the client CA cannot go from Preparing in slot 1 to Completing in slot 1`},
			{"a slot flipped, which has the controllers delete the other",
				`[{"op":"replace","path":"/status/rotations/0/slot","value":0}]`,
				`status.rotations[0].phase: Invalid value: "Preparing": the rotation of the client CA cannot go from Preparing in slot 1 to Preparing in slot 0`},
			{"the old CA dropped",
				`[{"op":"replace","path":"/status/rotations/0/phase","value":"Completing"},{"op":"add","path":"/status/rotations/0/lastCompletionTime","value":"2026-01-01T00:00:00Z"}]`,
				`status.rotations[0].phase: Invalid value: "Completing"`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := rootShards.Patch(ctx, "rotating", types.JSONPatchType, []byte(tc.patch), metav1.PatchOptions{}, "status")
				assertInvalid(t, err, "status.rotations[0].phase")
				assert.Contains(t, err.Error(), `RootShard.operator.kcp.io "rotating" is invalid`)
				assert.Contains(t, err.Error(), tc.says)
				stored, err := rootShards.Get(ctx, "rotating", metav1.GetOptions{})
				require.NoError(t, err)
				assert.Equal(t, before.Status.Rotations, stored.Status.Rotations, "nothing stored")
			})
		}
	})
}
