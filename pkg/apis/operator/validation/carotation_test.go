package validation

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

func TestValidateRotations(t *testing.T) {
	ok := []operator.CARotationState{{Authority: "server", Phase: operator.CARotationPreparing, Slot: 1}, {Authority: "client", Phase: operator.CARotationCompleted}}
	assert.Empty(t, validateRotations(ok, RootShardAuthorities, RootShardMemberKinds, nil))
	bad := []operator.CARotationState{{Authority: "server", Phase: "Done", Slot: 2}, {Authority: "server", Phase: operator.CARotationPrepared}, {Authority: "kubelet", Phase: operator.CARotationPrepared}}
	errs := validateRotations(bad, RootShardAuthorities, RootShardMemberKinds, nil)
	assert.Contains(t, errs.ToAggregate().Error(), `[0].phase: Unsupported value: "Done"`)
	assert.Contains(t, errs.ToAggregate().Error(), `[0].slot: Invalid value: 2`)
	assert.Contains(t, errs.ToAggregate().Error(), `[1].authority: Duplicate value: "server"`)
	assert.Contains(t, errs.ToAggregate().Error(), `[2].authority: Unsupported value: "kubelet"`)
}

// TestRotationAuthoritiesArePKIs: the authorities the API takes are the PKI's.
func TestRotationAuthoritiesArePKIs(t *testing.T) {
	assert.Equal(t, append(pki.RootShardAuthorities(), pki.Authority(pki.LinkCA)), RootShardAuthorities)
	assert.Contains(t, RootShardAuthorities, "root", "the root CA the server issues is rotated too")
	assert.Equal(t, pki.CacheServerAuthorities(), CacheServerAuthorities)
}

func TestValidateCARotation(t *testing.T) {
	assert.NotEmpty(t, ValidateCARotation(nil, RootShardAuthorities, RootShardMemberKinds))
	assert.Empty(t, ValidateCARotation(&operator.CARotation{Spec: operator.CARotationSpec{Phase: operator.CARotationStart, Authorities: []string{"client"}}}, RootShardAuthorities, RootShardMemberKinds))
	assert.Empty(t, ValidateCARotation(&operator.CARotation{Spec: operator.CARotationSpec{Phase: operator.CARotationStart, Authorities: []string{"root", "server"}}}, RootShardAuthorities, RootShardMemberKinds))
	assert.NotEmpty(t, ValidateCARotation(&operator.CARotation{Spec: operator.CARotationSpec{Phase: operator.CARotationStart, Authorities: []string{"root"}}}, CacheServerAuthorities, nil),
		"a CacheServer has no root authority")
}

// TestValidateExcludeMembers has one row per rule of spec.excludeMembers.
func TestValidateExcludeMembers(t *testing.T) {
	req := func(members ...operator.CARotationMember) *operator.CARotation {
		return &operator.CARotation{Spec: operator.CARotationSpec{Phase: operator.CARotationStart, Authorities: []string{"client"}, ExcludeMembers: members}}
	}
	many := make([]operator.CARotationMember, MaxExcludedMembers+1)
	for i := range many {
		many[i] = operator.CARotationMember{Kind: "Shard", Name: fmt.Sprintf("s-%d", i)}
	}
	tests := []struct {
		name  string
		req   *operator.CARotation
		kinds []string
		says  string
	}{
		{name: "each member kind", req: req(operator.CARotationMember{Kind: "Shard", Name: "s"}, operator.CARotationMember{Kind: "FrontProxy", Name: "fp"},
			operator.CARotationMember{Kind: "VirtualWorkspace", Name: "vw"}), kinds: RootShardMemberKinds},
		{name: "an unknown kind", req: req(operator.CARotationMember{Kind: "Deployment", Name: "d"}), kinds: RootShardMemberKinds,
			says: `spec.excludeMembers[0].kind: Unsupported value: "Deployment"`},
		{name: "no name", req: req(operator.CARotationMember{Kind: "Shard"}), kinds: RootShardMemberKinds,
			says: `spec.excludeMembers[0].name: Required value`},
		{name: "an invalid name", req: req(operator.CARotationMember{Kind: "Shard", Name: "Not_A_Name"}), kinds: RootShardMemberKinds,
			says: `spec.excludeMembers[0].name: Invalid value: "Not_A_Name"`},
		{name: "a member twice", req: req(operator.CARotationMember{Kind: "Shard", Name: "s"}, operator.CARotationMember{Kind: "Shard", Name: "s"}),
			kinds: RootShardMemberKinds, says: `spec.excludeMembers[1]: Duplicate value`},
		{name: "too many", req: req(many...), kinds: RootShardMemberKinds, says: `spec.excludeMembers: Too many: 33: must have at most 32 items`},
		{name: "a CacheServer has no members", req: req(operator.CARotationMember{Kind: "Shard", Name: "s"}),
			says: `spec.excludeMembers: Forbidden: this kind's rotations wait for no member`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			authorities := RootShardAuthorities
			if tt.kinds == nil {
				authorities = CacheServerAuthorities
				tt.req.Spec.Authorities = []string{"ca"}
			}
			errs := ValidateCARotation(tt.req, authorities, tt.kinds)
			if tt.says == "" {
				assert.Empty(t, errs)
				return
			}
			assert.Contains(t, errs.ToAggregate().Error(), tt.says)
		})
	}
	bad := []operator.CARotationState{{Authority: "client", Phase: operator.CARotationPreparing, ExcludedMembers: []operator.CARotationMember{{Kind: "Pod", Name: "p"}}}}
	assert.Contains(t, validateRotations(bad, RootShardAuthorities, RootShardMemberKinds, field.NewPath("status", "rotations")).ToAggregate().Error(),
		`status.rotations[0].excludedMembers[0].kind: Unsupported value: "Pod"`)
}
