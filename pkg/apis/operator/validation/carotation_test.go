package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

func TestValidateRotations(t *testing.T) {
	ok := []operator.CARotationState{{Authority: "server", Phase: operator.CARotationPreparing, Slot: 1}, {Authority: "client", Phase: operator.CARotationCompleted}}
	assert.Empty(t, validateRotations(ok, RootShardAuthorities, nil))
	bad := []operator.CARotationState{{Authority: "server", Phase: "Done", Slot: 2}, {Authority: "server", Phase: operator.CARotationPrepared}, {Authority: "kubelet", Phase: operator.CARotationPrepared}}
	errs := validateRotations(bad, RootShardAuthorities, nil)
	assert.Contains(t, errs.ToAggregate().Error(), `[0].phase: Unsupported value: "Done"`)
	assert.Contains(t, errs.ToAggregate().Error(), `[0].slot: Invalid value: 2`)
	assert.Contains(t, errs.ToAggregate().Error(), `[1].authority: Duplicate value: "server"`)
	assert.Contains(t, errs.ToAggregate().Error(), `[2].authority: Unsupported value: "kubelet"`)
}

// TestRotationAuthoritiesArePKIs: the authorities the API takes are the PKI's.
func TestRotationAuthoritiesArePKIs(t *testing.T) {
	assert.Equal(t, pki.RootShardAuthorities(), RootShardAuthorities)
	assert.Contains(t, RootShardAuthorities, "root", "the root CA the server issues is rotated too")
	assert.Equal(t, pki.CacheServerAuthorities(), CacheServerAuthorities)
}

func TestValidateCARotation(t *testing.T) {
	assert.NotEmpty(t, ValidateCARotation(nil, RootShardAuthorities))
	assert.Empty(t, ValidateCARotation(&operator.CARotation{Spec: operator.CARotationSpec{Phase: operator.CARotationStart, Authorities: []string{"client"}}}, RootShardAuthorities))
	assert.Empty(t, ValidateCARotation(&operator.CARotation{Spec: operator.CARotationSpec{Phase: operator.CARotationStart, Authorities: []string{"root", "server"}}}, RootShardAuthorities))
	assert.NotEmpty(t, ValidateCARotation(&operator.CARotation{Spec: operator.CARotationSpec{Phase: operator.CARotationStart, Authorities: []string{"root"}}}, CacheServerAuthorities),
		"a CacheServer has no root authority")
}
