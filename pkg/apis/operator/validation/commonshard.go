package validation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
)

// validateComponentSpec checks what the spec of every component shares. roles are the
// allowed certificate template keys of the kind; reservedMounts are the directories the
// controllers mount into its container.
func validateComponentSpec(spec *operator.ComponentSpec, roles certificateRoles, reservedMounts []string, fldPath *field.Path) field.ErrorList {
	allErrs := validateImage(spec.Image, fldPath.Child("image"))
	allErrs = append(allErrs, validateReplicas(spec.Replicas, fldPath.Child("replicas"))...)
	allErrs = append(allErrs, validateResources(spec.Resources, fldPath.Child("resources"))...)
	allErrs = append(allErrs, validateCertificateTemplates(spec.CertificateTemplates, roles, fldPath.Child("certificateTemplates"))...)
	allErrs = append(allErrs, validateServiceTemplate(spec.ServiceTemplate, fldPath.Child("serviceTemplate"))...)
	allErrs = append(allErrs, validateDeploymentTemplate(spec.DeploymentTemplate, fldPath.Child("deploymentTemplate"))...)
	allErrs = append(allErrs, validateExtras(spec.ExtraArgs, spec.ExtraVolumes, spec.ExtraVolumeMounts, reservedMounts, fldPath)...)
	allErrs = append(allErrs, validateLogging(spec.Logging, fldPath.Child("logging"))...)
	return allErrs
}

// validateCABundleRefs checks the Secrets whose CAs are added to the server and client CA
// bundles.
func validateCABundleRefs(caBundle, clientCABundle *corev1.LocalObjectReference, fldPath *field.Path) field.ErrorList {
	allErrs := validateSecretReference(caBundle, fldPath.Child("caBundleSecretRef"))
	return append(allErrs, validateSecretReference(clientCABundle, fldPath.Child("clientCABundleRef"))...)
}

// validateCommonShardSpec checks what a RootShard and a Shard share. roles are the allowed
// certificate template keys of the kind.
func validateCommonShardSpec(spec *operator.CommonShardSpec, roles certificateRoles, fldPath *field.Path) field.ErrorList {
	allErrs := validateComponentSpec(&spec.ComponentSpec, roles, mountpaths.KcpServer(), fldPath)
	allErrs = append(allErrs, validateClusterDomain(spec.ClusterDomain, fldPath.Child("clusterDomain"))...)
	if spec.ShardBaseURL != "" {
		allErrs = append(allErrs, validateBaseURL(spec.ShardBaseURL, httpsSchemes, fldPath.Child("shardBaseURL"))...)
	}
	allErrs = append(allErrs, validateEtcdConfig(&spec.Etcd, fldPath.Child("etcd"))...)
	allErrs = append(allErrs, validateAudit(spec.Audit, fldPath.Child("audit"))...)
	allErrs = append(allErrs, validateAuthorization(spec.Authorization, fldPath.Child("authorization"))...)
	allErrs = append(allErrs, validateAuth(spec.Auth, fldPath.Child("auth"))...)
	allErrs = append(allErrs, validateCABundleRefs(spec.CABundleSecretRef, spec.ClientCABundleRef, fldPath)...)
	allErrs = append(allErrs, validateKcpVirtualWorkspace(spec.KcpVirtualWorkspace, fldPath.Child("kcpVirtualWorkspace"))...)
	return allErrs
}

// validateKcpVirtualWorkspace checks the reference to the VirtualWorkspace that serves kcp's
// virtual workspaces out of the shard's process: its name must be one a VirtualWorkspace can
// have. The reference may change on update: moving a shard to or from a standalone server is
// a rollout of the shard's flags, and no data lives in either server. A FrontProxy's path
// mapping to a VirtualWorkspace is checked alike.
func validateKcpVirtualWorkspace(ref *corev1.LocalObjectReference, fldPath *field.Path) field.ErrorList {
	if ref == nil {
		return nil
	}
	namePath := fldPath.Child("name")
	if ref.Name == "" {
		return field.ErrorList{field.Required(namePath, "")}
	}
	return invalidForEach(namePath, ref.Name, virtualWorkspaceNameFunc(ref.Name, false))
}

// validateCacheConfig checks an optional reference to a CacheServer: the object, or a copy
// of its cache-client Secret, at most one of them. No reference, "cache: {}" included, is
// what kcp-operator's Go SDK sends for a RootShard without a CacheServer (its field has no
// omitempty): the root shard's embedded cache, and for a Shard its RootShard's cache.
func validateCacheConfig(cache *operator.CacheConfig, fldPath *field.Path) field.ErrorList {
	if cache == nil {
		return nil
	}
	return validateRefs(cacheConfigRefs(cache), false, fldPath)
}

// validateRootShardConfig checks the required reference of a Shard or FrontProxy to its
// RootShard: the object, a copy of its join Secret, or a link's bootstrap Secret.
func validateRootShardConfig(rootShard *operator.RootShardConfig, fldPath *field.Path) field.ErrorList {
	return validateOneTarget(rootShardConfigRefs(rootShard), fldPath)
}

// validateRootShardConfigUpdate rejects moving a Shard or FrontProxy to another RootShard, or
// to another join Secret: its certificates are signed by the old one's CAs.
// A change of the name is reported at the name, a switch between ref, secretRef and link at
// spec.rootShard; a reference removed is reported by validateRootShardConfig alone.
func validateRootShardConfigUpdate(newConfig, oldConfig *operator.RootShardConfig, fldPath *field.Path) field.ErrorList {
	switch {
	case newConfig.Reference != nil && oldConfig.Reference != nil:
		return validateImmutable(newConfig.Reference.Name, oldConfig.Reference.Name, newConfig.Reference.Name, fldPath.Child("ref", "name"))
	case newConfig.SecretRef != nil && oldConfig.SecretRef != nil:
		return validateImmutable(newConfig.SecretRef.Name, oldConfig.SecretRef.Name, newConfig.SecretRef.Name, fldPath.Child("secretRef", "name"))
	case newConfig.Link != nil && oldConfig.Link != nil:
		return validateImmutable(newConfig.Link.SecretRef.Name, oldConfig.Link.SecretRef.Name, newConfig.Link.SecretRef.Name, fldPath.Child("link", "secretRef", "name"))
	case newConfig.Reference == nil && newConfig.SecretRef == nil && newConfig.Link == nil:
		return nil
	}
	return validateImmutable(*newConfig, *oldConfig, describeTarget(rootShardConfigRefs(newConfig)), fldPath)
}
