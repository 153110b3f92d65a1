package validation

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// validateAuth checks the authentication settings of a shard or front proxy.
func validateAuth(auth *operator.AuthSpec, fldPath *field.Path) field.ErrorList {
	if auth == nil {
		return nil
	}
	allErrs := validateOIDC(auth.OIDC, fldPath.Child("oidc"))
	allErrs = append(allErrs, validateFlagGroups(auth.DropGroups, fldPath.Child("dropGroups"))...)
	allErrs = append(allErrs, validateFlagGroups(auth.PassOnGroups, fldPath.Child("passOnGroups"))...)
	return allErrs
}

// validateOIDC checks the OpenID Connect settings that become kcp's --oidc-* flags.
func validateOIDC(oidc *operator.OIDCConfiguration, fldPath *field.Path) field.ErrorList {
	if oidc == nil {
		return nil
	}
	allErrs := validateHTTPSURL(oidc.IssuerURL, fldPath.Child("issuerURL"))
	if oidc.ClientID == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("clientID"), ""))
	}
	allErrs = append(allErrs, validateDataKeyReference(oidc.CAFileRef, fldPath.Child("caFileRef"))...)
	return allErrs
}

// validateFlagGroups checks group names that are joined into one comma-separated flag value,
// where an empty entry or a comma would change the list.
func validateFlagGroups(groups []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, group := range groups {
		switch {
		case group == "":
			allErrs = append(allErrs, field.Required(fldPath.Index(i), ""))
		case strings.Contains(group, ","):
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), group,
				"may not contain a comma: the groups are passed to kcp as one comma-separated flag value"))
		}
	}
	return allErrs
}
