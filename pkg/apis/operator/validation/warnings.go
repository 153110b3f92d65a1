package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// The warnings a create or an update returns with the object it stored: fields that are
// accepted for kcp-operator compatibility but deprecated there, or that have no effect here.
// Each names its field path and says what to use instead.

// RootShardWarnings are the warnings of a RootShard.
func RootShardWarnings(rs *operator.RootShard) []string {
	spec := field.NewPath("spec")
	var warnings []string
	warnings = append(warnings, commonShardWarnings(&rs.Spec.CommonShardSpec, spec)...)
	return warnings
}

// ShardWarnings are the warnings of a Shard.
func ShardWarnings(s *operator.Shard) []string {
	return commonShardWarnings(&s.Spec.CommonShardSpec, field.NewPath("spec"))
}

// FrontProxyWarnings are the warnings of a FrontProxy.
func FrontProxyWarnings(fp *operator.FrontProxy) []string {
	var warnings []string
	warnings = append(warnings, oidcClientSecretWarnings(fp.Spec.Auth, field.NewPath("spec", "auth"))...)
	return warnings
}

// KubeconfigWarnings are the warnings of a Kubeconfig.
func KubeconfigWarnings(kc *operator.Kubeconfig) []string {
	var warnings []string
	return warnings
}

func commonShardWarnings(spec *operator.CommonShardSpec, fldPath *field.Path) []string {
	var warnings []string
	warnings = append(warnings, shardAuthWarnings(spec.Auth, fldPath.Child("auth"))...)
	return warnings
}
