package validation

import (
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// ValidateShard validates a Shard on creation.
func ValidateShard(shard *operator.Shard) field.ErrorList {
	if shard == nil {
		return nilObject("Shard")
	}
	allErrs := apimachineryvalidation.ValidateObjectMeta(&shard.ObjectMeta, true, shardNameFunc, field.NewPath("metadata"))
	allErrs = append(allErrs, validateShardSpec(&shard.Spec, field.NewPath("spec"))...)
	return append(allErrs, validateKeptKeys(shard.Spec.CertificateTemplates, nil, shardTemplates, field.NewPath("spec", "certificateTemplates"))...)
}

// ValidateShardUpdate validates an update of a Shard's metadata and spec.
func ValidateShardUpdate(newObj, oldObj *operator.Shard) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("Shard")
	}
	specPath := field.NewPath("spec")
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateShardSpec(&newObj.Spec, specPath)...)
	allErrs = append(allErrs, validateKeptKeys(newObj.Spec.CertificateTemplates, &oldObj.Spec.CertificateTemplates, shardTemplates, specPath.Child("certificateTemplates"))...)
	allErrs = append(allErrs, validateRootShardConfigUpdate(&newObj.Spec.RootShard, &oldObj.Spec.RootShard, specPath.Child("rootShard"))...)
	allErrs = append(allErrs, validateEtcdConfigUpdate(&newObj.Spec.Etcd, &oldObj.Spec.Etcd, specPath.Child("etcd"))...)
	return allErrs
}

// ValidateShardStatusUpdate validates an update of a Shard's status.
func ValidateShardStatusUpdate(newObj, oldObj *operator.Shard) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("Shard")
	}
	status := &newObj.Status
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateStatus(status.Phase, setupPhases, status.ObservedGeneration, status.Conditions, field.NewPath("status"))...)
}

// validateShardSpec checks the common shard pieces plus the Shard's references.
func validateShardSpec(spec *operator.ShardSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateCommonShardSpec(&spec.CommonShardSpec, shardTemplates, fldPath)
	allErrs = append(allErrs, validateRootShardConfig(&spec.RootShard, fldPath.Child("rootShard"))...)
	allErrs = append(allErrs, validateCacheConfig(spec.Cache, fldPath.Child("cache"))...)
	allErrs = append(allErrs, validateCacheLink(spec, fldPath)...)
	if spec.Cache != nil && spec.Cache.Embedded != nil {
		// kcp-operator's Shard has no such field: a shard uses its RootShard's cache.
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("cache", "embedded"),
			"only a RootShard has an embedded cache: a Shard without spec.cache.ref uses its RootShard's"))
	}
	return allErrs
}

// validateCacheLink checks a Shard's spec.cache.link: the Link that names the CacheServer is
// the one of its RootShard, so it names the bootstrap Secret of spec.rootShard.link.
func validateCacheLink(spec *operator.ShardSpec, fldPath *field.Path) field.ErrorList {
	if spec.Cache == nil || spec.Cache.Link == nil || spec.Cache.Link.SecretRef.Name == "" {
		return nil
	}
	if spec.RootShard.Link == nil || spec.RootShard.Link.SecretRef.Name != spec.Cache.Link.SecretRef.Name {
		return field.ErrorList{field.Invalid(fldPath.Child("cache", "link", "secretRef", "name"), spec.Cache.Link.SecretRef.Name,
			"must name the bootstrap Secret of spec.rootShard.link: the Link of the RootShard names its CacheServer")}
	}
	return nil
}
