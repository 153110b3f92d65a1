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
	if d.Spec == nil {
		return nil
	}
	return disruptionBudget(*d.Name, *d.Namespace, d.Labels, d.Spec.Replicas, d.Spec.Selector)
}

// StatefulSetDisruptionBudget is DisruptionBudget for a StatefulSet: for an etcd cluster,
// one member down at a time keeps its quorum.
func StatefulSetDisruptionBudget(ss *appsv1ac.StatefulSetApplyConfiguration) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	if ss.Spec == nil {
		return nil
	}
	return disruptionBudget(*ss.Name, *ss.Namespace, ss.Labels, ss.Spec.Replicas, ss.Spec.Selector)
}

func disruptionBudget(name, namespace string, labels map[string]string, replicas *int32, selector *metav1ac.LabelSelectorApplyConfiguration) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	if replicas == nil || *replicas <= 1 || selector == nil {
		return nil
	}
	return policyv1ac.PodDisruptionBudget(name, namespace).WithLabels(labels).
		WithSpec(policyv1ac.PodDisruptionBudgetSpec().
			WithMaxUnavailable(intstr.FromInt32(1)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(selector.MatchLabels)))
}
