package validation

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

var (
	// auditWebhookModes are the modes of kube-apiserver's --audit-webhook-mode.
	auditWebhookModes = []string{"batch", "blocking", "blocking-strict"}
	// authorizationWebhookVersions are the SubjectAccessReview versions a webhook may speak.
	authorizationWebhookVersions = []string{"v1", "v1beta1"}
)

// validateAudit checks the audit settings of a shard, which become kcp's --audit-* flags.
func validateAudit(audit *operator.AuditSpec, fldPath *field.Path) field.ErrorList {
	if audit == nil {
		return nil
	}
	var allErrs field.ErrorList
	if audit.Policy != nil {
		allErrs = append(allErrs, validateDataKeyReference(audit.Policy.ConfigMap, fldPath.Child("policy", "configMap"))...)
	}
	if wh := audit.Webhook; wh != nil {
		whPath := fldPath.Child("webhook")
		allErrs = append(allErrs, validateDNS1123SubdomainName(wh.ConfigSecretName, whPath.Child("configSecretName"))...)
		if wh.Mode != "" && !slices.Contains(auditWebhookModes, wh.Mode) {
			allErrs = append(allErrs, field.NotSupported(whPath.Child("mode"), wh.Mode, auditWebhookModes))
		}
		allErrs = append(allErrs, validateNonNegativeInt32(wh.BatchBufferSize, whPath.Child("batchBufferSize"))...)
		allErrs = append(allErrs, validateNonNegativeInt32(wh.BatchMaxSize, whPath.Child("batchMaxSize"))...)
		allErrs = append(allErrs, validateNonNegativeInt32(wh.BatchThrottleBurst, whPath.Child("batchThrottleBurst"))...)
		allErrs = append(allErrs, validateNonNegativeInt32(wh.TruncateMaxBatchSize, whPath.Child("truncateMaxBatchSize"))...)
		allErrs = append(allErrs, validateNonNegativeInt32(wh.TruncateMaxEventSize, whPath.Child("truncateMaxEventSize"))...)
		allErrs = append(allErrs, validateQPS(wh.BatchThrottleQPS, whPath.Child("batchThrottleQPS"))...)
		allErrs = append(allErrs, validateNonNegativeDuration(wh.BatchMaxWait, whPath.Child("batchMaxWait"))...)
		allErrs = append(allErrs, validateNonNegativeDuration(wh.InitialBackoff, whPath.Child("initialBackoff"))...)
	}
	return allErrs
}

// validateQPS checks a rate kept as a decimal string, because it is passed on as a float flag.
func validateQPS(qps string, fldPath *field.Path) field.ErrorList {
	if qps == "" {
		return nil
	}
	v, err := strconv.ParseFloat(qps, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return field.ErrorList{field.Invalid(fldPath, qps, "must be a decimal number, e.g. '10' or '0.5'")}
	}
	if v < 0 {
		return field.ErrorList{field.Invalid(fldPath, qps, "must be greater than or equal to 0")}
	}
	return nil
}

// Authorizers are the authorizers kcp's --authorization-order names
// (pkg/server/options/authorization.go, defaultAuthorizers, at every supported release).
var Authorizers = []string{"AlwaysAllowGroups", "AlwaysAllowPaths", "RBAC", "Webhook"}

// validateAuthorization checks the authorizers of a shard: their order, the paths allowed
// without asking, and the webhook authorizer.
func validateAuthorization(authz *operator.AuthorizationSpec, fldPath *field.Path) field.ErrorList {
	if authz == nil {
		return nil
	}
	allErrs := validateAllowPaths(authz.AllowPaths, fldPath.Child("allowPaths"))
	allErrs = append(allErrs, validateAuthorizationOrder(authz.Order, fldPath.Child("order"))...)
	if authz.Webhook == nil {
		return allErrs
	}
	wh, whPath := authz.Webhook, fldPath.Child("webhook")
	allErrs = append(allErrs, validateDNS1123SubdomainName(wh.ConfigSecretName, whPath.Child("configSecretName"))...)
	allErrs = append(allErrs, validateAllowPaths(wh.AllowPaths, whPath.Child("allowPaths"))...)
	if len(authz.AllowPaths) > 0 && len(wh.AllowPaths) > 0 {
		allErrs = append(allErrs, field.Forbidden(whPath.Child("allowPaths"),
			"may not be set together with "+fldPath.Child("allowPaths").String()+", which replaces it"))
	}
	allErrs = append(allErrs, validateNonNegativeDuration(wh.CacheAuthorizedTTL, whPath.Child("cacheAuthorizedTTL"))...)
	allErrs = append(allErrs, validateNonNegativeDuration(wh.CacheUnauthorizedTTL, whPath.Child("cacheUnauthorizedTTL"))...)
	if wh.Version != "" && !slices.Contains(authorizationWebhookVersions, wh.Version) {
		allErrs = append(allErrs, field.NotSupported(whPath.Child("version"), wh.Version, authorizationWebhookVersions))
	}
	return allErrs
}

// validateAllowPaths checks the paths kcp authorizes without asking: each an absolute path,
// a trailing * making it a prefix, as kcp's path authorizer reads them.
func validateAllowPaths(paths []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if paths != nil && len(paths) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, "[]",
			"an empty list is stored as no list, which is kcp's default (/healthz, /readyz, /livez): to allow no path without asking, leave AlwaysAllowPaths out of spec.authorization.order"))
	}
	for i, p := range paths {
		if !strings.HasPrefix(p, "/") {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), p, "must start with '/'"))
		} else if strings.Contains(strings.TrimSuffix(p, "*"), "*") {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), p, "may have a '*' only at its end (a prefix)"))
		}
	}
	return allErrs
}

// validateAuthorizationOrder checks kcp's --authorization-order: known authorizers, each at
// most once, at least one.
func validateAuthorizationOrder(order []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if order != nil && len(order) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, "[]", "kcp would ask no authorizer and refuse every request: name at least one, or leave the field out for kcp's default order"))
	}
	seen := map[string]bool{}
	for i, a := range order {
		switch {
		case !slices.Contains(Authorizers, a):
			allErrs = append(allErrs, field.NotSupported(fldPath.Index(i), a, Authorizers))
		case seen[a]:
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), a))
		}
		seen[a] = true
	}
	return allErrs
}
