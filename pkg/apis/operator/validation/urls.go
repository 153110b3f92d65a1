package validation

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	httpsSchemes       = []string{"https"}
	httpOrHTTPSSchemes = []string{"http", "https"}
)

// validateBaseURL checks a URL that names a server and nothing more (an etcd endpoint, a
// shard base URL): the server appends its own paths, so a path, query, fragment or user info
// would be silently dropped or produce a broken URL.
func validateBaseURL(value string, schemes []string, fldPath *field.Path) field.ErrorList {
	u, allErrs := validateServerURL(value, schemes, fldPath)
	if u == nil {
		return allErrs
	}
	if u.User != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, value, "may not contain user information"))
	}
	if u.Path != "" && u.Path != "/" {
		allErrs = append(allErrs, field.Invalid(fldPath, value, "may not contain a path"))
	}
	if u.RawQuery != "" || u.ForceQuery {
		allErrs = append(allErrs, field.Invalid(fldPath, value, "may not contain a query"))
	}
	if u.Fragment != "" {
		allErrs = append(allErrs, field.Invalid(fldPath, value, "may not contain a fragment"))
	}
	return allErrs
}

// validateHTTPSURL checks a required https URL with a host, where a path is meaningful (an
// OIDC issuer, a proxied backend).
func validateHTTPSURL(value string, fldPath *field.Path) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	_, allErrs := validateServerURL(value, httpsSchemes, fldPath)
	return allErrs
}

// validateServerURL parses a URL and checks its scheme, host and port. It returns a nil URL
// when the rest of the URL is not worth checking.
func validateServerURL(value string, schemes []string, fldPath *field.Path) (*url.URL, field.ErrorList) {
	u, err := url.Parse(value)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(fldPath, value, "must be a valid URL: "+err.Error())}
	}
	// Without a known scheme the parse is unreliable ("etcd-0:2379" parses with the scheme
	// "etcd-0"), so one error says it all.
	if !slices.Contains(schemes, u.Scheme) {
		return nil, field.ErrorList{field.Invalid(fldPath, value, "must be a URL with the scheme "+quoteAlternatives(schemes))}
	}

	var allErrs field.ErrorList
	if u.Hostname() == "" {
		allErrs = append(allErrs, field.Invalid(fldPath, value, "must contain a host"))
	}
	if port := u.Port(); port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || len(validation.IsValidPortNum(n)) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath, value, "port must be between 1 and 65535, inclusive"))
		}
	}
	return u, allErrs
}

// quoteAlternatives renders ["http", "https"] as `"http" or "https"`.
func quoteAlternatives(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = strconv.Quote(v)
	}
	return strings.Join(quoted, " or ")
}
