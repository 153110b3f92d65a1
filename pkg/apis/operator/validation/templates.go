package validation

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// serviceTypes are the Service types a template may choose. ExternalName is not among them:
// it would make the Service an alias instead of a way to the pods.
var serviceTypes = []corev1.ServiceType{
	corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer,
}

// validateMetadataTemplate checks labels and annotations copied onto a generated object.
func validateMetadataTemplate(meta *operator.MetadataTemplate, fldPath *field.Path) field.ErrorList {
	if meta == nil {
		return nil
	}
	allErrs := metav1validation.ValidateLabels(meta.Labels, fldPath.Child("labels"))
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(meta.Annotations, fldPath.Child("annotations"))...)
	allErrs = append(allErrs, validateNoOwnKeys(meta.Labels, fldPath.Child("labels"))...)
	return append(allErrs, validateNoOwnKeys(meta.Annotations, fldPath.Child("annotations"))...)
}

// validateNoOwnKeys refuses a label or annotation of the server's own domain: the server
// finds, selects and trusts its objects by them (operator.kcp.io/reference marks a Secret as
// a copy to hand a setup's keys to), so a template may not set them on what it generates.
func validateNoOwnKeys(keys map[string]string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if prefix, _, found := strings.Cut(k, "/"); found && (prefix == operator.GroupName || strings.HasSuffix(prefix, "."+operator.GroupName)) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(k), "the "+operator.GroupName+"/ keys are the server's own"))
		}
	}
	return allErrs
}

// validateDeploymentTemplate checks what is merged into a generated Deployment.
func validateDeploymentTemplate(tmpl *operator.DeploymentTemplate, fldPath *field.Path) field.ErrorList {
	if tmpl == nil {
		return nil
	}
	allErrs := validateMetadataTemplate(tmpl.Metadata, fldPath.Child("metadata"))
	if tmpl.Spec == nil || tmpl.Spec.Template == nil {
		return allErrs
	}
	podPath := fldPath.Child("spec", "template")
	allErrs = append(allErrs, validateMetadataTemplate(tmpl.Spec.Template.Metadata, podPath.Child("metadata"))...)
	if m := tmpl.Spec.Template.Metadata; m != nil {
		allErrs = append(allErrs, validatePodAnnotations(m.Annotations, podPath.Child("metadata", "annotations"))...)
	}
	allErrs = append(allErrs, validatePodSpecTemplate(tmpl.Spec.Template.Spec, podPath.Child("spec"))...)
	return allErrs
}

// validateServiceTemplate checks what is merged into a generated Service.
func validateServiceTemplate(tmpl *operator.ServiceTemplate, fldPath *field.Path) field.ErrorList {
	if tmpl == nil {
		return nil
	}
	allErrs := validateMetadataTemplate(tmpl.Metadata, fldPath.Child("metadata"))
	spec := tmpl.Spec
	if spec == nil {
		return allErrs
	}
	specPath := fldPath.Child("spec")
	typeKnown := spec.Type == "" || slices.Contains(serviceTypes, spec.Type)
	if !typeKnown {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("type"), spec.Type, serviceTypes))
	}
	clusterIPPath := specPath.Child("clusterIP")
	switch spec.ClusterIP {
	case "":
	case corev1.ClusterIPNone:
		// A headless Service has no node port or load balancer to route through.
		if typeKnown && spec.Type != "" && spec.Type != corev1.ServiceTypeClusterIP {
			allErrs = append(allErrs, field.Invalid(clusterIPPath, spec.ClusterIP, "may be None only when type is ClusterIP"))
		}
	default:
		allErrs = append(allErrs, validation.IsValidIP(clusterIPPath, spec.ClusterIP)...)
	}
	return allErrs
}
