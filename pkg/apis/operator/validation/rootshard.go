package validation

import (
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
)

// ValidateRootShard validates a RootShard on creation.
func ValidateRootShard(rootShard *operator.RootShard) field.ErrorList {
	if rootShard == nil {
		return nilObject("RootShard")
	}
	allErrs := apimachineryvalidation.ValidateObjectMeta(&rootShard.ObjectMeta, true, rootShardNameFunc, field.NewPath("metadata"))
	allErrs = append(allErrs, validateRootShardSpec(&rootShard.Spec, field.NewPath("spec"))...)
	return append(allErrs, validateKeptKeys(rootShard.Spec.CertificateTemplates, nil, rootShardTemplates, field.NewPath("spec", "certificateTemplates"))...)
}

// ValidateRootShardUpdate validates an update of a RootShard's metadata and spec.
func ValidateRootShardUpdate(newObj, oldObj *operator.RootShard) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("RootShard")
	}
	specPath := field.NewPath("spec")
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateRootShardSpec(&newObj.Spec, specPath)...)
	allErrs = append(allErrs, validateKeptKeys(newObj.Spec.CertificateTemplates, &oldObj.Spec.CertificateTemplates, rootShardTemplates, specPath.Child("certificateTemplates"))...)
	allErrs = append(allErrs, validateCertificatesUpdate(newObj.Spec.Certificates, oldObj.Spec.Certificates, specPath.Child("certificates"))...)
	allErrs = append(allErrs, validateEtcdConfigUpdate(&newObj.Spec.Etcd, &oldObj.Spec.Etcd, specPath.Child("etcd"))...)
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
	allErrs = append(allErrs, validateRotations(status.Rotations, RootShardAuthorities, RootShardMemberKinds, statusPath.Child("rotations"))...)
	_, stepErrs := RotationSteps(status.Rotations, oldObj.Status.Rotations, statusPath.Child("rotations"))
	return append(allErrs, stepErrs...)
}

// validateRootShardSpec checks the common shard pieces plus what only a RootShard has.
func validateRootShardSpec(spec *operator.RootShardSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateCommonShardSpec(&spec.CommonShardSpec, rootShardTemplates, fldPath)
	allErrs = append(allErrs, validateExternalConfig(&spec.External, fldPath.Child("external"))...)
	allErrs = append(allErrs, validateRootShardCacheConfig(spec.Cache, fldPath.Child("cache"))...)
	allErrs = append(allErrs, validateCertificates(spec.Certificates, fldPath.Child("certificates"))...)
	allErrs = append(allErrs, validateRootShardProxy(spec.Proxy, fldPath.Child("proxy"))...)
	allErrs = append(allErrs, validateSetupVersion(spec, fldPath)...)
	return allErrs
}

// validateRootShardCacheConfig checks a RootShard's cache: the CacheServer it references,
// else its embedded cache. kcp-operator's deprecated embedded.enabled is accepted with a
// warning whatever its value; true together with a ref means the ref, as in kcp-operator.
// A link is a Shard's way to the cache of a RootShard of another cluster: a RootShard is in
// the cluster of its cache's home.
func validateRootShardCacheConfig(cache *operator.CacheConfig, fldPath *field.Path) field.ErrorList {
	allErrs := validateCacheConfig(cache, fldPath)
	if cache != nil && cache.Link != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("link"),
			"only a Shard uses a CacheServer over a link: a RootShard names its CacheServer by ref or secretRef"))
	}
	return allErrs
}

// validateRootShardProxy checks kcp-operator's internal root-shard front proxy like the spec
// of a FrontProxy, so that bad input is refused even though kcp-setups runs no such proxy
// (RootShardWarnings says so).
func validateRootShardProxy(proxy *operator.RootShardProxySpec, fldPath *field.Path) field.ErrorList {
	if proxy == nil {
		return nil
	}
	return validateComponentSpec(&proxy.ComponentSpec, frontProxyTemplates, mountpaths.FrontProxy(), fldPath)
}
