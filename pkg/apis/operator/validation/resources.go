package validation

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateResources checks a container's resource requirements the way the host cluster
// will, so that a bad value is rejected here rather than failing the Deployment later.
func validateResources(res *corev1.ResourceRequirements, fldPath *field.Path) field.ErrorList {
	if res == nil {
		return nil
	}
	limitsPath, requestsPath := fldPath.Child("limits"), fldPath.Child("requests")
	allErrs := validateNonNegativeQuantities(res.Limits, limitsPath)
	allErrs = append(allErrs, validateNonNegativeQuantities(res.Requests, requestsPath)...)

	for _, name := range sortedResourceNames(res.Requests) {
		request, limit := res.Requests[name], res.Limits[name]
		if _, hasLimit := res.Limits[name]; !hasLimit || request.Sign() < 0 || limit.Sign() < 0 {
			// Negative quantities were reported above; comparing them would count one fault twice.
			continue
		}
		if request.Cmp(limit) > 0 {
			allErrs = append(allErrs, field.Invalid(requestsPath.Key(string(name)), request.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		}
	}
	return allErrs
}

// validateNonNegativeQuantities checks every quantity of a resource list.
func validateNonNegativeQuantities(list corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, name := range sortedResourceNames(list) {
		if q := list[name]; q.Sign() < 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Key(string(name)), q.String(), apimachineryvalidation.IsNegativeErrorMsg))
		}
	}
	return allErrs
}

// sortedResourceNames keeps the order of errors stable across calls.
func sortedResourceNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for name := range list {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
