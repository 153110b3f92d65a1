package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// validateExternalConfig checks how a RootShard's kcp installation is reached from outside:
// the hostname ends up in certificates and kubeconfigs, so it must be a DNS name.
func validateExternalConfig(ext *operator.ExternalConfig, fldPath *field.Path) field.ErrorList {
	allErrs := validateDNS1123SubdomainName(ext.Hostname, fldPath.Child("hostname"))
	// Defaulting has set 6443, so 0 here is a client that bypassed it.
	allErrs = append(allErrs, validatePort(ext.Port, fldPath.Child("port"))...)
	allErrs = append(allErrs, validateOptionalDNS1123Subdomain(ext.PrivateHostname, fldPath.Child("privateHostname"))...)
	if ext.PrivatePort != nil {
		allErrs = append(allErrs, validatePort(*ext.PrivatePort, fldPath.Child("privatePort"))...)
	}
	return allErrs
}

// validateFrontProxyExternalConfig checks a front proxy's own address. Both fields are
// optional: an empty hostname or a zero port inherits the RootShard's.
func validateFrontProxyExternalConfig(ext *operator.FrontProxyExternalConfig, fldPath *field.Path) field.ErrorList {
	if ext == nil {
		return nil
	}
	allErrs := validateOptionalDNS1123Subdomain(ext.Hostname, fldPath.Child("hostname"))
	if ext.Port != 0 {
		allErrs = append(allErrs, validatePort(ext.Port, fldPath.Child("port"))...)
	}
	allErrs = append(allErrs, validateOptionalDNS1123Subdomain(ext.PrivateHostname, fldPath.Child("privateHostname"))...)
	if ext.PrivatePort != nil {
		allErrs = append(allErrs, validatePort(*ext.PrivatePort, fldPath.Child("privatePort"))...)
	}
	return allErrs
}
