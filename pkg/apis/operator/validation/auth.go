package validation

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
)

// validateAuth checks the authentication settings of a shard or front proxy.
func validateAuth(auth *operator.AuthSpec, fldPath *field.Path) field.ErrorList {
	if auth == nil {
		return nil
	}
	allErrs := validateOIDC(auth.OIDC, fldPath.Child("oidc"))
	allErrs = append(allErrs, validateAuthWebhook(auth.Webhook, fldPath.Child("webhook"))...)
	allErrs = append(allErrs, validateTokenAuthFile(auth.TokenAuthFile, fldPath.Child("tokenAuthFile"))...)
	allErrs = append(allErrs, validateFlagGroups(auth.DropGroups, fldPath.Child("dropGroups"))...)
	allErrs = append(allErrs, validateFlagGroups(auth.PassOnGroups, fldPath.Child("passOnGroups"))...)
	return append(allErrs, validatePassOnGroups(auth.PassOnGroups, fldPath.Child("passOnGroups"))...)
}

// validatePassOnGroups refuses passing on a group kcp-front-proxy drops by default: the front
// proxy always drops them (the builders add them to any dropGroups), and a spec that asks to
// pass them on says that a client claiming them should be shard admin behind the proxy.
func validatePassOnGroups(groups []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, group := range groups {
		if slices.Contains(kcpversion.FrontProxyDefaultDropGroups, group) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Index(i), fmt.Sprintf(
				"%s is always dropped by the front proxy (with %s): a client claiming it would be shard admin on every shard",
				group, strings.Join(kcpversion.FrontProxyDefaultDropGroups, ", "))))
		}
	}
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
	if ref := oidc.CAFileRef; ref != nil {
		// The key defaults to ca.crt (kcp-operator's default), so only its form is checked.
		refPath := fldPath.Child("caFileRef")
		allErrs = append(allErrs, validateDNS1123SubdomainName(ref.Name, refPath.Child("name"))...)
		allErrs = append(allErrs, validateOptionalSecretKey(ref.Key, refPath.Child("key"))...)
	}
	return allErrs
}

// authWebhookVersions are the TokenReview versions a token webhook may speak
// (--authentication-token-webhook-version).
var authWebhookVersions = []string{"v1", "v1beta1"}

// validateAuthWebhook checks the token webhook, whose Secret's key kubeconfig is mounted.
func validateAuthWebhook(wh *operator.AuthWebhookSpec, fldPath *field.Path) field.ErrorList {
	if wh == nil {
		return nil
	}
	allErrs := validateDNS1123SubdomainName(wh.ConfigSecretName, fldPath.Child("configSecretName"))
	allErrs = append(allErrs, validateNonNegativeDuration(wh.CacheAuthenticationTTL, fldPath.Child("cacheAuthenticationTTL"))...)
	if wh.Version != "" && !slices.Contains(authWebhookVersions, wh.Version) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("version"), wh.Version, authWebhookVersions))
	}
	return allErrs
}

// validateTokenAuthFile checks the static token file's Secret and key; the key defaults to
// token.csv.
func validateTokenAuthFile(t *operator.TokenAuthFileSpec, fldPath *field.Path) field.ErrorList {
	if t == nil {
		return nil
	}
	allErrs := validateDNS1123SubdomainName(t.SecretName, fldPath.Child("secretName"))
	return append(allErrs, validateOptionalSecretKey(t.Key, fldPath.Child("key"))...)
}

// validateOptionalSecretKey checks a Secret key that has a default when empty.
func validateOptionalSecretKey(key string, fldPath *field.Path) field.ErrorList {
	if key == "" {
		return nil
	}
	return invalidForEach(fldPath, key, validation.IsConfigMapKey(key))
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

// oidcClientSecretWarnings are the warning of auth.oidc.clientSecret wherever it is set.
func oidcClientSecretWarnings(auth *operator.AuthSpec, fldPath *field.Path) []string {
	if auth == nil || auth.OIDC == nil || auth.OIDC.ClientSecret == "" {
		return nil
	}
	return []string{fldPath.Child("oidc", "clientSecret").String() +
		" is deprecated in kcp-operator and ignored: kube's OIDC authentication needs no client secret"}
}

// shardAuthWarnings are the warnings of a shard's auth: the groups kcp-operator's shared
// AuthSpec carries only act on a front proxy.
func shardAuthWarnings(auth *operator.AuthSpec, fldPath *field.Path) []string {
	if auth == nil {
		return nil
	}
	warnings := oidcClientSecretWarnings(auth, fldPath)
	const onlyFrontProxy = " has no effect on a RootShard or Shard: it only takes effect on a FrontProxy"
	if len(auth.DropGroups) > 0 {
		warnings = append(warnings, fldPath.Child("dropGroups").String()+onlyFrontProxy)
	}
	if len(auth.PassOnGroups) > 0 {
		warnings = append(warnings, fldPath.Child("passOnGroups").String()+onlyFrontProxy)
	}
	return warnings
}
