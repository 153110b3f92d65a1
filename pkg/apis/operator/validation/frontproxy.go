package validation

import (
	"path"
	"strings"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
)

// ValidateFrontProxy validates a FrontProxy on creation.
func ValidateFrontProxy(frontProxy *operator.FrontProxy) field.ErrorList {
	if frontProxy == nil {
		return nilObject("FrontProxy")
	}
	allErrs := apimachineryvalidation.ValidateObjectMeta(&frontProxy.ObjectMeta, true, frontProxyNameFunc, field.NewPath("metadata"))
	return append(allErrs, validateFrontProxySpec(&frontProxy.Spec, field.NewPath("spec"))...)
}

// ValidateFrontProxyUpdate validates an update of a FrontProxy's metadata and spec.
func ValidateFrontProxyUpdate(newObj, oldObj *operator.FrontProxy) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("FrontProxy")
	}
	specPath := field.NewPath("spec")
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateFrontProxySpec(&newObj.Spec, specPath)...)
	allErrs = append(allErrs, validateRootShardConfigUpdate(&newObj.Spec.RootShard, &oldObj.Spec.RootShard, specPath.Child("rootShard"))...)
	return allErrs
}

// ValidateFrontProxyStatusUpdate validates an update of a FrontProxy's status.
func ValidateFrontProxyStatusUpdate(newObj, oldObj *operator.FrontProxy) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("FrontProxy")
	}
	status := &newObj.Status
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateStatus(status.Phase, setupPhases, status.ObservedGeneration, status.Conditions, field.NewPath("status"))...)
}

// validateFrontProxySpec checks a FrontProxy's spec.
func validateFrontProxySpec(spec *operator.FrontProxySpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateComponentSpec(&spec.ComponentSpec, frontProxyTemplates, mountpaths.FrontProxy(), fldPath)
	allErrs = append(allErrs, validateRootShardConfig(&spec.RootShard, fldPath.Child("rootShard"))...)
	allErrs = append(allErrs, validateFrontProxyExternalConfig(spec.External, fldPath.Child("external"))...)
	allErrs = append(allErrs, validateDeprecatedExternalHostname(spec, fldPath.Child("externalHostname"))...)
	allErrs = append(allErrs, validateAuth(spec.Auth, fldPath.Child("auth"))...)
	allErrs = append(allErrs, validatePathMappings(spec.AdditionalPathMappings, fldPath.Child("additionalPathMappings"))...)
	allErrs = append(allErrs, validateCABundleRefs(spec.CABundleSecretRef, spec.ClientCABundleRef, fldPath)...)
	return allErrs
}

// validatePathMappings checks the entries of kcp-front-proxy's mapping file. Two entries for
// one path would make the routing depend on their order.
func validatePathMappings(mappings []operator.PathMappingEntry, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	paths := sets.New[string]()
	for i, m := range mappings {
		idxPath := fldPath.Index(i)
		pathPath := idxPath.Child("path")
		switch {
		case m.Path == "":
			allErrs = append(allErrs, field.Required(pathPath, ""))
		case !strings.HasPrefix(m.Path, "/"):
			allErrs = append(allErrs, field.Invalid(pathPath, m.Path, "must start with '/'"))
		case paths.Has(m.Path):
			allErrs = append(allErrs, field.Duplicate(pathPath, m.Path))
		}
		paths.Insert(m.Path)

		allErrs = append(allErrs, validateHTTPSURL(m.Backend, idxPath.Child("backend"))...)
		allErrs = append(allErrs, validateOptionalAbsoluteFilePath(m.BackendServerCA, idxPath.Child("backend_server_ca"))...)
		allErrs = append(allErrs, validateOptionalAbsoluteFilePath(m.ProxyClientCert, idxPath.Child("proxy_client_cert"))...)
		allErrs = append(allErrs, validateOptionalAbsoluteFilePath(m.ProxyClientKey, idxPath.Child("proxy_client_key"))...)
	}
	return allErrs
}

// validateOptionalAbsoluteFilePath checks a file path inside the container. A relative path
// would depend on the working directory of the image.
func validateOptionalAbsoluteFilePath(value string, fldPath *field.Path) field.ErrorList {
	if value == "" || path.IsAbs(value) {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, value, "must be an absolute path")}
}

// validateDeprecatedExternalHostname checks kcp-operator's deprecated externalHostname like
// external.hostname, which it stands for; kcp-operator refuses both together, and so does
// this server, since one of them would be ignored.
func validateDeprecatedExternalHostname(spec *operator.FrontProxySpec, fldPath *field.Path) field.ErrorList {
	if spec.ExternalHostname == "" {
		return nil
	}
	allErrs := validateOptionalDNS1123Subdomain(spec.ExternalHostname, fldPath)
	if spec.External != nil && spec.External.Hostname != "" {
		allErrs = append(allErrs, field.Forbidden(fldPath, "may not be set together with spec.external.hostname: use spec.external.hostname only"))
	}
	return allErrs
}
