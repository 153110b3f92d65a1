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

// validateAuthorization checks the webhook authorizer of a shard.
func validateAuthorization(authz *operator.AuthorizationSpec, fldPath *field.Path) field.ErrorList {
	if authz == nil || authz.Webhook == nil {
		return nil
	}
	wh, whPath := authz.Webhook, fldPath.Child("webhook")
	allErrs := validateDNS1123SubdomainName(wh.ConfigSecretName, whPath.Child("configSecretName"))
	for i, p := range wh.AllowPaths {
		if !strings.HasPrefix(p, "/") {
			allErrs = append(allErrs, field.Invalid(whPath.Child("allowPaths").Index(i), p, "must start with '/'"))
		}
	}
	allErrs = append(allErrs, validateNonNegativeDuration(wh.CacheAuthorizedTTL, whPath.Child("cacheAuthorizedTTL"))...)
	allErrs = append(allErrs, validateNonNegativeDuration(wh.CacheUnauthorizedTTL, whPath.Child("cacheUnauthorizedTTL"))...)
	if wh.Version != "" && !slices.Contains(authorizationWebhookVersions, wh.Version) {
		allErrs = append(allErrs, field.NotSupported(whPath.Child("version"), wh.Version, authorizationWebhookVersions))
	}
	return allErrs
}
