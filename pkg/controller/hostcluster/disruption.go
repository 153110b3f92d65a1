package hostcluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	policyv1listers "k8s.io/client-go/listers/policy/v1"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// newDisruptionBudgetApplier is the applier of PodDisruptionBudgets, over the host's cache of
// them; someone else's change to one is undone, as for Deployments.
func (c *Host) newDisruptionBudgetApplier() Applied[*policyv1ac.PodDisruptionBudgetApplyConfiguration] {
	return Applied[*policyv1ac.PodDisruptionBudgetApplyConfiguration]{
		Kind:   "PodDisruptionBudget",
		Labels: func(o *policyv1ac.PodDisruptionBudgetApplyConfiguration) map[string]string { return o.Labels },
		Lookup: func(ctx context.Context, ns, name string) (metav1.Object, error) {
			list, err := c.claimKube().PolicyV1().PodDisruptionBudgets(ns).List(ctx, byName(name))
			return listed(name, list, err)
		},
		Key: func(o *policyv1ac.PodDisruptionBudgetApplyConfiguration) (string, string) {
			return *o.Namespace, *o.Name
		},
		Annotate: func(o *policyv1ac.PodDisruptionBudgetApplyConfiguration, a map[string]string) { o.WithAnnotations(a) },
		Mark:     func(o *policyv1ac.PodDisruptionBudgetApplyConfiguration, l map[string]string) { o.WithLabels(l) },
		Get: func(ns, name string) (metav1.Object, error) {
			return c.DisruptionBudgets.PodDisruptionBudgets(ns).Get(name)
		},
		Apply: func(ctx context.Context, o *policyv1ac.PodDisruptionBudgetApplyConfiguration) (metav1.Object, error) {
			return applied(c.Kube.PolicyV1().PodDisruptionBudgets(*o.Namespace).Apply(ctx, o, ApplyOptions))
		},
	}.WithDriftDetection()
}

// WithDisruptionBudgets gives the host its cache of PodDisruptionBudgets, and their applier.
func (c *Host) WithDisruptionBudgets(lister policyv1listers.PodDisruptionBudgetLister) *Host {
	c.DisruptionBudgets = lister
	c.DisruptionBudgetApplier = c.newDisruptionBudgetApplier()
	return c
}

// ApplyDisruptionBudget applies the PodDisruptionBudget of a Deployment the controllers
// applied, or deletes it once the Deployment has one replica; it reports whether it wrote.
func (c *Host) ApplyDisruptionBudget(ctx context.Context, d *appsv1ac.DeploymentApplyConfiguration) (bool, error) {
	if pdb := workload.DisruptionBudget(d); pdb != nil {
		return c.DisruptionBudgetApplier.ApplyIfChanged(ctx, pdb)
	}
	ns, name := *d.Namespace, *d.Name
	existing, err := c.DisruptionBudgets.PodDisruptionBudgets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if mark, ok := ownerMark(ctx, d.Labels); ok && ownedByAnother(existing, mark) {
		return false, &NameConflictError{Kind: "PodDisruptionBudget", Namespace: ns, Name: name, Holder: holder(existing)}
	}
	err = c.Kube.PolicyV1().PodDisruptionBudgets(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &existing.UID}})
	observeWrite("PodDisruptionBudget", err)
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("deleting PodDisruptionBudget %s/%s: %w", ns, name, err)
	}
	klog.FromContext(ctx).V(2).Info("Deleted: one replica", "kind", "PodDisruptionBudget", "object", klog.KRef(ns, name))
	return true, nil
}
