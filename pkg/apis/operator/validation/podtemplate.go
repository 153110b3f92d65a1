package validation

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

var (
	tolerationOperators = []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}
	taintEffects        = []corev1.TaintEffect{
		corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute,
	}
	unsatisfiableConstraintActions = []corev1.UnsatisfiableConstraintAction{
		corev1.DoNotSchedule, corev1.ScheduleAnyway,
	}
)

// validatePodSpecTemplate checks the pod settings merged into a generated Deployment, as the
// host cluster would, so that a mistake is a 422 here instead of a stuck rollout later.
func validatePodSpecTemplate(spec *operator.PodSpecTemplate, fldPath *field.Path) field.ErrorList {
	if spec == nil {
		return nil
	}
	allErrs := metav1validation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))
	// Affinity is accepted as is: its many nested selectors are validated by the host cluster.
	allErrs = append(allErrs, validateTolerations(spec.Tolerations, fldPath.Child("tolerations"))...)
	allErrs = append(allErrs, validateHostAliases(spec.HostAliases, fldPath.Child("hostAliases"))...)
	allErrs = append(allErrs, validateLocalObjectReferences(spec.ImagePullSecrets, fldPath.Child("imagePullSecrets"))...)
	allErrs = append(allErrs, validateTopologySpreadConstraints(spec.TopologySpreadConstraints, fldPath.Child("topologySpreadConstraints"))...)
	return allErrs
}

// validateTolerations checks tolerations the way the host cluster does.
func validateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, t := range tolerations {
		idxPath := fldPath.Index(i)
		allErrs = append(allErrs, validateTolerationScope(t, idxPath)...)
		if t.Key != "" {
			allErrs = append(allErrs, invalidForEach(idxPath.Child("key"), t.Key, validation.IsQualifiedName(t.Key))...)
		}
		switch t.Operator {
		case "", corev1.TolerationOpEqual:
			// An empty key matches every taint, which only makes sense with Exists.
			if t.Key == "" {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("operator"), t.Operator, "must be Exists when key is empty"))
			}
			allErrs = append(allErrs, invalidForEach(idxPath.Child("value"), t.Value, validation.IsValidLabelValue(t.Value))...)
		case corev1.TolerationOpExists:
			if t.Value != "" {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("value"), t.Value, "must be empty when operator is Exists"))
			}
		default:
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("operator"), t.Operator, tolerationOperators))
		}
		if t.Effect != "" && !slices.Contains(taintEffects, t.Effect) {
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("effect"), t.Effect, taintEffects))
		}
		// Only an eviction can be delayed.
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("effect"), t.Effect, "must be NoExecute when tolerationSeconds is set"))
		}
	}
	return allErrs
}

// validateHostAliases checks entries added to the pods' hosts file.
func validateHostAliases(aliases []corev1.HostAlias, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, alias := range aliases {
		idxPath := fldPath.Index(i)
		if alias.IP == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("ip"), ""))
		} else {
			allErrs = append(allErrs, validation.IsValidIP(idxPath.Child("ip"), alias.IP)...)
		}
		for j, hostname := range alias.Hostnames {
			allErrs = append(allErrs, validateDNS1123SubdomainName(hostname, idxPath.Child("hostnames").Index(j))...)
		}
	}
	return allErrs
}

// validateTopologySpreadConstraints checks how the pods spread over topology domains.
func validateTopologySpreadConstraints(constraints []corev1.TopologySpreadConstraint, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, c := range constraints {
		idxPath := fldPath.Index(i)
		if c.MaxSkew <= 0 {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
		}
		if c.TopologyKey == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("topologyKey"), "can not be empty"))
		} else {
			allErrs = append(allErrs, invalidForEach(idxPath.Child("topologyKey"), c.TopologyKey, validation.IsQualifiedName(c.TopologyKey))...)
		}
		if !slices.Contains(unsatisfiableConstraintActions, c.WhenUnsatisfiable) {
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, unsatisfiableConstraintActions))
		}
	}
	return allErrs
}
