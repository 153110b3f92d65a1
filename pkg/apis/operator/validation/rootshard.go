package validation

import (
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// ValidateRootShard validates a RootShard on creation.
func ValidateRootShard(rootShard *operator.RootShard) field.ErrorList {
	if rootShard == nil {
		return nilObject("RootShard")
	}
	allErrs := apimachineryvalidation.ValidateObjectMeta(&rootShard.ObjectMeta, true, rootShardNameFunc, field.NewPath("metadata"))
	return append(allErrs, validateRootShardSpec(&rootShard.Spec, field.NewPath("spec"))...)
}

// ValidateRootShardUpdate validates an update of a RootShard's metadata and spec.
func ValidateRootShardUpdate(newObj, oldObj *operator.RootShard) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("RootShard")
	}
	specPath := field.NewPath("spec")
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateRootShardSpec(&newObj.Spec, specPath)...)
	allErrs = append(allErrs, validateCertificatesUpdate(newObj.Spec.Certificates, oldObj.Spec.Certificates, specPath.Child("certificates"))...)
	return allErrs
}

// ValidateRootShardStatusUpdate validates an update of a RootShard's status.
func ValidateRootShardStatusUpdate(newObj, oldObj *operator.RootShard) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("RootShard")
	}
	statusPath := field.NewPath("status")
	status := &newObj.Status
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateStatus(status.Phase, setupPhases, status.ObservedGeneration, status.Conditions, statusPath)...)
	allErrs = append(allErrs, validateShardReferences(status.Shards, statusPath.Child("shards"))...)
	return allErrs
}

// validateRootShardSpec checks the common shard pieces plus what only a RootShard has.
func validateRootShardSpec(spec *operator.RootShardSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateCommonShardSpec(&spec.CommonShardSpec, rootShardTemplates, fldPath)
	allErrs = append(allErrs, validateExternalConfig(&spec.External, fldPath.Child("external"))...)
	allErrs = append(allErrs, validateCacheConfig(spec.Cache, fldPath.Child("cache"))...)
	allErrs = append(allErrs, validateCertificates(spec.Certificates, fldPath.Child("certificates"))...)
	return allErrs
}
