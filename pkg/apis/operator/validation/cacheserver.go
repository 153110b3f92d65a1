package validation

import (
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
)

// ValidateCacheServer validates a CacheServer on creation.
func ValidateCacheServer(cacheServer *operator.CacheServer) field.ErrorList {
	if cacheServer == nil {
		return nilObject("CacheServer")
	}
	allErrs := apimachineryvalidation.ValidateObjectMeta(&cacheServer.ObjectMeta, true, cacheServerNameFunc, field.NewPath("metadata"))
	allErrs = append(allErrs, validateCacheServerSpec(&cacheServer.Spec, field.NewPath("spec"))...)
	return append(allErrs, validateKeptKeys(cacheServer.Spec.CertificateTemplates, nil, cacheServerTemplates, field.NewPath("spec", "certificateTemplates"))...)
}

// ValidateCacheServerUpdate validates an update of a CacheServer's metadata and spec.
func ValidateCacheServerUpdate(newObj, oldObj *operator.CacheServer) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("CacheServer")
	}
	specPath := field.NewPath("spec")
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateCacheServerSpec(&newObj.Spec, specPath)...)
	allErrs = append(allErrs, validateKeptKeys(newObj.Spec.CertificateTemplates, &oldObj.Spec.CertificateTemplates, cacheServerTemplates, specPath.Child("certificateTemplates"))...)
	allErrs = append(allErrs, validateCertificatesUpdate(newObj.Spec.Certificates, oldObj.Spec.Certificates, specPath.Child("certificates"))...)
	return allErrs
}

// ValidateCacheServerStatusUpdate validates an update of a CacheServer's status.
func ValidateCacheServerStatusUpdate(newObj, oldObj *operator.CacheServer) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("CacheServer")
	}
	status := &newObj.Status
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateRotations(status.Rotations, CacheServerAuthorities, nil, field.NewPath("status", "rotations"))...)
	_, stepErrs := RotationSteps(status.Rotations, oldObj.Status.Rotations, field.NewPath("status", "rotations"))
	allErrs = append(allErrs, stepErrs...)
	return append(allErrs, validateStatus(status.Phase, setupPhases, status.ObservedGeneration, status.Conditions, field.NewPath("status"))...)
}

// validateCacheServerSpec checks a CacheServer's spec.
func validateCacheServerSpec(spec *operator.CacheServerSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateComponentSpec(&spec.ComponentSpec, cacheServerTemplates, mountpaths.CacheServer(), fldPath)
	allErrs = append(allErrs, validateClusterDomain(spec.ClusterDomain, fldPath.Child("clusterDomain"))...)
	allErrs = append(allErrs, validateCacheServerReplicas(spec, fldPath.Child("replicas"))...)
	allErrs = append(allErrs, validateCacheServerEtcdConfig(spec.Etcd, fldPath.Child("etcd"))...)
	allErrs = append(allErrs, validateCacheServerVersion(spec, fldPath)...)
	allErrs = append(allErrs, validateCertificates(spec.Certificates, fldPath.Child("certificates"))...)
	return allErrs
}

// validateCacheServerReplicas checks the replica count against the storage. Each pod without
// spec.etcd runs its own embedded etcd, so several pods would serve diverging caches.
func validateCacheServerReplicas(spec *operator.CacheServerSpec, fldPath *field.Path) field.ErrorList {
	if spec.Replicas != nil && *spec.Replicas > 1 && spec.Etcd == nil {
		return field.ErrorList{field.Invalid(fldPath, *spec.Replicas,
			"more than one replica requires spec.etcd, the embedded etcd cannot be shared")}
	}
	return nil
}
