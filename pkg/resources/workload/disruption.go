package workload

import (
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
)

// DisruptionBudget builds the PodDisruptionBudget of a component's Deployment, named and
// labelled like it: a node drain takes at most one of its pods at a time. A Deployment of one
// replica has none (nil), as a budget would block every drain.
func DisruptionBudget(d *appsv1ac.DeploymentApplyConfiguration) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	if d.Spec == nil || d.Spec.Replicas == nil || *d.Spec.Replicas <= 1 || d.Spec.Selector == nil {
		return nil
	}
	return policyv1ac.PodDisruptionBudget(*d.Name, *d.Namespace).WithLabels(d.Labels).
		WithSpec(policyv1ac.PodDisruptionBudgetSpec().
			WithMaxUnavailable(intstr.FromInt32(1)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(d.Spec.Selector.MatchLabels)))
}
