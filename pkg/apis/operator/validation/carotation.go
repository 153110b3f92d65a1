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

// RootShardAuthorities and CacheServerAuthorities are the CAs status.rotations may name.
var (
	RootShardAuthorities   = []string{"root", "server", "client", "front-proxy-client", "requestheader-client", "service-account", "etcd-client", "etcd-peer"}
	CacheServerAuthorities = []string{"ca"}
)

// validateRotations checks status.rotations as the rotation subresource and the controllers
// write it: one entry per known authority, a known phase, slot 0 or 1.
func validateRotations(rotations []operator.CARotationState, authorities []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[string]bool{}
	phases := []operator.CARotationPhase{operator.CARotationPreparing, operator.CARotationPrepared, operator.CARotationCompleting, operator.CARotationCompleted}
	for i, r := range rotations {
		p := fldPath.Index(i)
		switch {
		case seen[r.Authority]:
			allErrs = append(allErrs, field.Duplicate(p.Child("authority"), r.Authority))
		case !slices.Contains(authorities, r.Authority):
			allErrs = append(allErrs, field.NotSupported(p.Child("authority"), r.Authority, authorities))
		}
		seen[r.Authority] = true
		if !slices.Contains(phases, r.Phase) {
			allErrs = append(allErrs, field.NotSupported(p.Child("phase"), r.Phase, phases))
		}
		if r.Slot != 0 && r.Slot != 1 {
			allErrs = append(allErrs, field.Invalid(p.Child("slot"), r.Slot, "must be 0 or 1"))
		}
	}
	return allErrs
}
