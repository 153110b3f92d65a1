package validation

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// ValidateCARotation validates a request to the rotation subresource of an object whose
// rotatable CAs are authorities. Its metadata is checked against the URL by the registry,
// and it is never stored.
func ValidateCARotation(req *operator.CARotation, authorities []string) field.ErrorList {
	if req == nil {
		return nilObject("CARotation")
	}
	var allErrs field.ErrorList
	spec := field.NewPath("spec")
	switch req.Spec.Phase {
	case operator.CARotationStart, operator.CARotationComplete:
	case "":
		allErrs = append(allErrs, field.Required(spec.Child("phase"), "Start or Complete"))
	default:
		allErrs = append(allErrs, field.NotSupported(spec.Child("phase"), req.Spec.Phase,
			[]operator.CARotationRequestPhase{operator.CARotationStart, operator.CARotationComplete}))
	}
	path := spec.Child("authorities")
	if len(req.Spec.Authorities) == 0 {
		allErrs = append(allErrs, field.Required(path, "the CAs to rotate"))
	}
	seen := map[string]bool{}
	for i, a := range req.Spec.Authorities {
		switch {
		case seen[a]:
			allErrs = append(allErrs, field.Duplicate(path.Index(i), a))
		case !slices.Contains(authorities, a):
			allErrs = append(allErrs, field.NotSupported(path.Index(i), a, authorities))
		}
		seen[a] = true
	}
	return allErrs
}
