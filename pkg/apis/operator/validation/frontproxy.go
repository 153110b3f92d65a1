package validation

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

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
	return append(allErrs, validateFrontProxySpec(&frontProxy.Spec, frontProxy.Namespace, field.NewPath("spec"))...)
}

// ValidateFrontProxyUpdate validates an update of a FrontProxy's metadata and spec.
func ValidateFrontProxyUpdate(newObj, oldObj *operator.FrontProxy) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("FrontProxy")
	}
	specPath := field.NewPath("spec")
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateFrontProxySpec(&newObj.Spec, newObj.Namespace, specPath)...)
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

// validateFrontProxySpec checks a FrontProxy's spec in namespace.
func validateFrontProxySpec(spec *operator.FrontProxySpec, namespace string, fldPath *field.Path) field.ErrorList {
	allErrs := validateComponentSpec(&spec.ComponentSpec, frontProxyTemplates, mountpaths.FrontProxy(), fldPath)
	allErrs = append(allErrs, validateRootShardConfig(&spec.RootShard, fldPath.Child("rootShard"))...)
	allErrs = append(allErrs, validateFrontProxyExternalConfig(spec.External, fldPath.Child("external"))...)
	allErrs = append(allErrs, validateDeprecatedExternalHostname(spec, fldPath.Child("externalHostname"))...)
	allErrs = append(allErrs, validateAuth(spec.Auth, fldPath.Child("auth"))...)
	allErrs = append(allErrs, validatePathMappings(spec.AdditionalPathMappings, spec.ExtraVolumeMounts, namespace, fldPath.Child("additionalPathMappings"))...)
	allErrs = append(allErrs, validateCABundleRefs(spec.CABundleSecretRef, spec.ClientCABundleRef, fldPath)...)
	return allErrs
}

// validatePathMappings checks the entries of kcp-front-proxy's mapping file. Two entries for
// one path would make the routing depend on their order.
//
// The proxy sends a mapped request with the client certificate and key the entry names, so
// an entry may name only files of volumes its author mounted (spec.extraVolumeMounts): the
// proxy's own identities, such as its system:masters client toward the root shard, and its
// CAs are the server's. And it may route only to a Service of the FrontProxy's own
// namespace (mounts holds the author's mounts; namespace is the FrontProxy's).
func validatePathMappings(mappings []operator.PathMappingEntry, mounts []corev1.VolumeMount, namespace string, fldPath *field.Path) field.ErrorList {
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

		if m.VirtualWorkspaceRef != nil {
			allErrs = append(allErrs, validateVirtualWorkspaceMapping(m, idxPath)...)
			continue
		}
		backendPath := idxPath.Child("backend")
		if errs := validateHTTPSURL(m.Backend, backendPath); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
		} else {
			allErrs = append(allErrs, validateBackendInNamespace(m.Backend, namespace, backendPath)...)
		}
		allErrs = append(allErrs, validateMappedFile(m.BackendServerCA, mounts, idxPath.Child("backend_server_ca"))...)
		allErrs = append(allErrs, validateMappedFile(m.ProxyClientCert, mounts, idxPath.Child("proxy_client_cert"))...)
		allErrs = append(allErrs, validateMappedFile(m.ProxyClientKey, mounts, idxPath.Child("proxy_client_key"))...)
	}
	return allErrs
}

// validateVirtualWorkspaceMapping checks an entry that names a VirtualWorkspace: the server
// computes its backend, CA and identity (the proxy's request-header identity, toward that
// VirtualWorkspace's Service only), so the entry sets none of them.
func validateVirtualWorkspaceMapping(m operator.PathMappingEntry, fldPath *field.Path) field.ErrorList {
	allErrs := validateKcpVirtualWorkspace(m.VirtualWorkspaceRef, fldPath.Child("virtualWorkspaceRef"))
	for _, f := range []struct{ name, value string }{
		{"backend", m.Backend}, {"backend_server_ca", m.BackendServerCA},
		{"proxy_client_cert", m.ProxyClientCert}, {"proxy_client_key", m.ProxyClientKey},
	} {
		if f.value != "" {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(f.name),
				"must be empty with virtualWorkspaceRef: the server routes the path to the VirtualWorkspace's Service, verified by the proxy's server CA, with the proxy's request-header identity"))
		}
	}
	return allErrs
}

// validateMappedFile checks a file a path mapping names: absolute, clean, and inside one of
// the author's extra volume mounts.
func validateMappedFile(file string, mounts []corev1.VolumeMount, fldPath *field.Path) field.ErrorList {
	if file == "" {
		return nil
	}
	if errs := validateOptionalAbsoluteFilePath(file, fldPath); len(errs) > 0 {
		return errs
	}
	if path.Clean(file) != file {
		return field.ErrorList{field.Invalid(fldPath, file, "must be a clean path, without '.', '..' or repeated slashes")}
	}
	for _, mount := range mounts {
		if dir := path.Clean(mount.MountPath); path.IsAbs(dir) && dir != "/" && strings.HasPrefix(file, dir+"/") {
			return nil
		}
	}
	return field.ErrorList{field.Forbidden(fldPath,
		"must be a file in a volume of spec.extraVolumes mounted by spec.extraVolumeMounts: the proxy's own identities and CAs are the server's")}
}

// validateBackendInNamespace checks that a path mapping routes to a Service of namespace:
// <service>, <service>.<namespace>, <service>.<namespace>.svc, or that followed by the
// cluster's domain.
func validateBackendInNamespace(backend, namespace string, fldPath *field.Path) field.ErrorList {
	u, err := url.Parse(backend)
	if err != nil {
		return field.ErrorList{field.Invalid(fldPath, backend, err.Error())}
	}
	labels := strings.Split(u.Hostname(), ".")
	inNamespace := len(validation.IsDNS1035Label(labels[0])) == 0 &&
		(len(labels) == 1 || (namespace != "" && labels[1] == namespace && (len(labels) == 2 || labels[2] == "svc")))
	if inNamespace {
		return nil
	}
	return field.ErrorList{field.Forbidden(fldPath, fmt.Sprintf(
		"must be a Service of the FrontProxy's namespace %q: <service>, <service>.%s or <service>.%s.svc[.<cluster domain>]",
		namespace, namespace, namespace))}
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
	var allErrs field.ErrorList
	if host, port, err := net.SplitHostPort(spec.ExternalHostname); err == nil {
		// host:port, as kcp-operator reads it (externalHostnameWarnings says how).
		allErrs = append(allErrs, validateOptionalDNS1123Subdomain(host, fldPath)...)
		if host == "" {
			allErrs = append(allErrs, field.Invalid(fldPath, spec.ExternalHostname, "must be a host name, or host:port"))
		}
		if n, err := strconv.Atoi(port); err != nil || len(validation.IsValidPortNum(n)) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath, spec.ExternalHostname, "port must be between 1 and 65535, inclusive"))
		}
	} else {
		allErrs = append(allErrs, validateOptionalDNS1123Subdomain(spec.ExternalHostname, fldPath)...)
	}
	if spec.External != nil && spec.External.Hostname != "" {
		allErrs = append(allErrs, field.Forbidden(fldPath, "may not be set together with spec.external.hostname: use spec.external.hostname only"))
	}
	return allErrs
}
