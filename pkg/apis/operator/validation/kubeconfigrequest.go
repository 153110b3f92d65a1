package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// MinKubeconfigRequestExpirationSeconds matches the shortest lifetime TokenRequest allows;
// a shorter credential would expire before a client could use it reliably.
const MinKubeconfigRequestExpirationSeconds = 600

// ValidateKubeconfigRequest validates the spec of a request to the kubeconfig subresource.
// Its metadata is checked against the URL by the registry, and it is never stored.
func ValidateKubeconfigRequest(req *operator.KubeconfigRequest) field.ErrorList {
	if req == nil {
		return nilObject("KubeconfigRequest")
	}
	var allErrs field.ErrorList
	spec, specPath := &req.Spec, field.NewPath("spec")

	expirationPath := specPath.Child("expirationSeconds")
	switch {
	case spec.ExpirationSeconds == nil:
		// Defaulting sets 3600, so nil means a caller bypassed it.
		allErrs = append(allErrs, field.Required(expirationPath, ""))
	case *spec.ExpirationSeconds < MinKubeconfigRequestExpirationSeconds:
		allErrs = append(allErrs, field.Invalid(expirationPath, *spec.ExpirationSeconds, "may not specify a duration less than 10 minutes"))
	}
	// An empty workspace is defaulted to root.
	if spec.Workspace != "" {
		allErrs = append(allErrs, validateWorkspacePath(spec.Workspace, specPath.Child("workspace"))...)
	}
	// An empty username means the requester's own, which the registry checks once it knows
	// it (ValidateMintedIdentity). The identity is checked here, before the registry asks the
	// authorizer about each name, so that an oversized request costs no SubjectAccessReview.
	allErrs = append(allErrs, validateIdentity(spec.Username, spec.Groups, specPath.Child("username"), specPath.Child("groups"))...)
	return allErrs
}
