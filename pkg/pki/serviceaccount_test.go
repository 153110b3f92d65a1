package pki

import (
	"testing"

	"github.com/stretchr/testify/assert"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// The signing leaf's slots follow the service-account CA's, but the shard signs with the old
// slot until the leaves switch, while the CA's Issuer signs the new slot from Start.
func TestSigningSlots(t *testing.T) {
	sa := Authority(ServiceAccountCA)
	for _, tc := range []struct {
		name     string
		st       *operatorv1alpha1.CARotationState
		signing  int32
		live     []int32
		caIssuer int32
	}{
		{"never rotated", nil, 0, []int32{0}, 0},
		{"Start: the new key issued, the old one signs", &operatorv1alpha1.CARotationState{Authority: sa, Phase: "Preparing", Slot: 1}, 0, []int32{0, 1}, 1},
		{"the shards sign with the new slot", &operatorv1alpha1.CARotationState{Authority: sa, Phase: "Preparing", Slot: 1, LeavesSwitched: true}, 1, []int32{0, 1}, 1},
		{"Prepared", &operatorv1alpha1.CARotationState{Authority: sa, Phase: "Prepared", Slot: 1, LeavesSwitched: true}, 1, []int32{0, 1}, 1},
		{"Completed: the new slot alone", &operatorv1alpha1.CARotationState{Authority: sa, Phase: "Completed", Slot: 1, LeavesSwitched: true}, 1, []int32{1}, 1},
		{"a second rotation back to slot 0", &operatorv1alpha1.CARotationState{Authority: sa, Phase: "Preparing", Slot: 0}, 1, []int32{0, 1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rotations []operatorv1alpha1.CARotationState
			if tc.st != nil {
				rotations = []operatorv1alpha1.CARotationState{*tc.st}
			}
			got := SigningSlots(rotations)
			assert.Equal(t, tc.signing, got.Issuer, "the signing slot")
			assert.Equal(t, tc.live, got.Live)
			assert.Equal(t, tc.caIssuer, SlotsOf(rotations, sa).Issuer, "the CA's Issuer")
		})
	}
	assert.True(t, IsSigningLeaf(Labels("shard", "s", ServiceAccountRole)))
	assert.False(t, IsSigningLeaf(Labels("shard", "s", ServiceAccountRole+TrustSuffix)))
}
