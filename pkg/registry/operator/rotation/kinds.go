package rotation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// RootShards reaches the rotations of RootShards: their root CA, unless the user brings it,
// and their intermediate CAs.
var RootShards = Access{
	Authorities: validation.RootShardAuthorities,
	MemberKinds: validation.RootShardMemberKinds,
	Rotations: func(obj runtime.Object) (*[]operator.CARotationState, bool) {
		rs, ok := obj.(*operator.RootShard)
		if !ok {
			return nil, false
		}
		return &rs.Status.Rotations, true
	},
	Refuse: func(obj runtime.Object, authority string, path *field.Path) *field.Error {
		rs, ok := obj.(*operator.RootShard)
		if ok && authority == pki.RootAuthority && rs.Spec.Certificates != nil && rs.Spec.Certificates.CASecretRef != nil {
			return field.Invalid(path, authority, fmt.Sprintf(
				"the RootShard's root CA is the Secret %s of spec.certificates.caSecretRef: rotate it by replacing that Secret", rs.Spec.Certificates.CASecretRef.Name))
		}
		return nil
	},
}

// CacheServers reaches the rotation of a CacheServer's CA, unless the user brings it.
var CacheServers = Access{
	Authorities: validation.CacheServerAuthorities,
	Rotations: func(obj runtime.Object) (*[]operator.CARotationState, bool) {
		cs, ok := obj.(*operator.CacheServer)
		if !ok {
			return nil, false
		}
		return &cs.Status.Rotations, true
	},
	Refuse: func(obj runtime.Object, authority string, path *field.Path) *field.Error {
		cs, ok := obj.(*operator.CacheServer)
		if ok && cs.Spec.Certificates != nil && cs.Spec.Certificates.CASecretRef != nil {
			return field.Invalid(path, authority, fmt.Sprintf(
				"the CacheServer's CA is the Secret %s of spec.certificates.caSecretRef: rotate it by replacing that Secret", cs.Spec.Certificates.CASecretRef.Name))
		}
		return nil
	},
}
