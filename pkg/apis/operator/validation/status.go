package validation

import (
	"slices"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

var (
	// setupPhases are the phases of a RootShard, Shard, FrontProxy or CacheServer.
	setupPhases = []operator.Phase{operator.PhaseProvisioning, operator.PhaseRunning, operator.PhaseDeleting}
	// kubeconfigPhases are the phases of a Kubeconfig.
	kubeconfigPhases = []operator.KubeconfigPhase{
		operator.KubeconfigPhaseProvisioning, operator.KubeconfigPhaseReady, operator.KubeconfigPhaseFailed,
	}
)

// validateStatus checks the fields every status has. An empty phase means a controller has
// not reported yet.
func validateStatus[P ~string](phase P, phases []P, observedGeneration int64, conditions []metav1.Condition, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if phase != "" && !slices.Contains(phases, phase) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("phase"), phase, phases))
	}
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(observedGeneration, fldPath.Child("observedGeneration"))...)
	allErrs = append(allErrs, metav1validation.ValidateConditions(conditions, fldPath.Child("conditions"))...)
	return allErrs
}

// validateShardReferences checks the Shards a RootShard reports.
func validateShardReferences(shards []operator.ShardReference, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[operator.ShardReference]()
	for i, shard := range shards {
		p := fldPath.Index(i)
		namePath := p.Child("name")
		switch {
		case seen.Has(shard):
			allErrs = append(allErrs, field.Duplicate(namePath, shard.Name))
		case shard.Link == "":
			// A Shard of the RootShard's namespace.
			allErrs = append(allErrs, validateDNS1035LabelName(shard.Name, namePath)...)
			if shard.Namespace != "" {
				allErrs = append(allErrs, field.Forbidden(p.Child("namespace"), "only a linked Shard has a namespace of its own"))
			}
		default:
			// A Shard of another cluster, as its remote reported it over a Link.
			allErrs = append(allErrs, validateDNS1123SubdomainName(shard.Name, namePath)...)
			allErrs = append(allErrs, validateDNS1035LabelName(shard.Link, p.Child("link"))...)
			for _, msg := range apimachineryvalidation.ValidateNamespaceName(shard.Namespace, false) {
				allErrs = append(allErrs, field.Invalid(p.Child("namespace"), shard.Namespace, msg))
			}
		}
		seen.Insert(shard)
	}
	return allErrs
}
