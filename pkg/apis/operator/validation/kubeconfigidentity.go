package validation

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The bounds of an identity the server puts into a certificate: the username is the subject's
// CommonName and each group an Organization. RFC 5280's upper bounds (ub-common-name,
// ub-organization-name) are 64 characters, and cert-manager refuses a Certificate whose
// commonName is longer, so a longer name would be stored and never issued.
const (
	// MaxCommonNameLength is the longest CommonName, in bytes, the server puts into a
	// certificate, whether it takes it from a field or builds it from an object's name.
	MaxCommonNameLength = 64
	// MaxIdentityGroups is the most groups an identity may ask for: each one the requester is
	// not in is one SubjectAccessReview, asked in turn.
	MaxIdentityGroups = 32
	// maxGroupLength is the longest group name, in bytes.
	maxGroupLength = 64
)

// validateIdentity checks the username and the groups a Kubeconfig or a KubeconfigRequest
// asks for. An empty username is left to the caller, which either requires it or takes the
// requester's.
func validateIdentity(username string, groups []string, usernamePath, groupsPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if username != "" {
		allErrs = append(allErrs, validateRequestedName(username, MaxCommonNameLength, usernamePath)...)
	}
	if len(groups) > MaxIdentityGroups {
		// The groups are not checked one by one: the request is refused anyway, and thousands
		// of errors would only bury this one.
		return append(allErrs, field.TooMany(groupsPath, len(groups), MaxIdentityGroups))
	}
	allErrs = append(allErrs, validateNonEmptyUniqueStrings(groups, groupsPath)...)
	for i, g := range groups {
		if g != "" {
			allErrs = append(allErrs, validateRequestedName(g, maxGroupLength, groupsPath.Index(i))...)
		}
	}
	return allErrs
}

// validateRequestedName checks a username or a group name a field asks for: no surrounding
// whitespace, and then validateIdentityName, so that a trailing tab is one fault, not two.
func validateRequestedName(value string, maxLength int, fldPath *field.Path) field.ErrorList {
	if errs := validateNoSurroundingWhitespace(value, fldPath); len(errs) > 0 {
		return errs
	}
	return validateIdentityName(value, maxLength, fldPath)
}

// ValidateMintedIdentity checks the identity the kubeconfig subresource is about to mint when
// it is the requester's own, which no field of the request carries: the authenticator's
// username and groups must fit a certificate as a requested one must. The errors name the
// field that would have asked for another identity.
func ValidateMintedIdentity(username string, groups []string) field.ErrorList {
	specPath := field.NewPath("spec")
	var allErrs field.ErrorList
	for _, err := range validateIdentityName(username, MaxCommonNameLength, specPath.Child("username")) {
		err.Detail = "the requester's own username: " + err.Detail + "; ask for another identity with spec.username"
		allErrs = append(allErrs, err)
	}
	groupsPath := specPath.Child("groups")
	if len(groups) > MaxIdentityGroups {
		err := field.TooMany(groupsPath, len(groups), MaxIdentityGroups)
		err.Detail = "the requester's own groups: " + err.Detail + "; ask for fewer with spec.groups"
		return append(allErrs, err)
	}
	for i, g := range groups {
		for _, err := range validateIdentityName(g, maxGroupLength, groupsPath.Index(i)) {
			err.Detail = "one of the requester's own groups: " + err.Detail + "; ask for other groups with spec.groups"
			allErrs = append(allErrs, err)
		}
	}
	return allErrs
}

// validateIdentityName checks a username or a group name: at most maxLength bytes of UTF-8
// that print as what they are. A control character (NUL included) or an invisible formatting
// character, such as a bidi override, would make a name that reads as another's.
func validateIdentityName(value string, maxLength int, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(value) > maxLength {
		err := field.TooLong(fldPath, "", maxLength)
		err.Detail = fmt.Sprintf("%s, not %d: a certificate's subject holds names of at most %d (RFC 5280's upper bounds), and cert-manager refuses a longer commonName",
			err.Detail, len(value), maxLength)
		allErrs = append(allErrs, err)
	}
	if !utf8.ValidString(value) {
		return append(allErrs, field.Invalid(fldPath, value, "must be valid UTF-8"))
	}
	for i, r := range value {
		if !unicode.IsPrint(r) || unicode.Is(unicode.Cf, r) {
			allErrs = append(allErrs, field.Invalid(fldPath, value,
				fmt.Sprintf("must consist of printable characters: the character %U at byte %d is a control or formatting character", r, i)))
			break
		}
	}
	return allErrs
}
