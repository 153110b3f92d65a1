package hostcluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

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
