package rootshard

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// finalize removes everything the controller created for a RootShard that is being
// deleted, and only that, then lets the RootShard go.
func (c *Controller) finalize(ctx context.Context, rs *operatorv1alpha1.RootShard) error {
	if !slices.Contains(rs.Finalizers, Finalizer) {
		return nil
	}
	if rs.Status.Phase != operatorv1alpha1.PhaseDeleting {
		status := *rs.Status.DeepCopy()
		status.Phase = operatorv1alpha1.PhaseDeleting
		setCondition(&status, rs, operatorv1alpha1.ConditionAvailable, metav1.ConditionFalse, ReasonDeleting, "the root shard is being deleted")
		if err := c.updateStatus(ctx, rs, status); err != nil {
			return err
		}
	}

	owned := labels.SelectorFromSet(labels.Set{
		pki.LabelManagedBy:             pki.ManagedBy,
		pki.OwnerLabel(rootshard.Kind): rs.Name,
	}).String()
	if err := c.host.DeleteOwned(ctx, rs.Namespace, owned); err != nil {
		return err
	}
	if rs.Spec.Certificates == nil && c.lastBootstrapUser(rs) {
		bootstrap := labels.SelectorFromSet(rootshard.BootstrapLabels()).String()
		if err := c.host.DeleteOwned(ctx, rs.Namespace, bootstrap); err != nil {
			return err
		}
	}
	c.recorder.Event(rs, "Normal", "Cleaned", "Deleted the Deployment, Service, Certificates, Issuers and Secrets of the root shard")

	rs = rs.DeepCopy()
	rs.Finalizers = slices.DeleteFunc(rs.Finalizers, func(f string) bool { return f == Finalizer })
	_, err := c.client.OperatorV1alpha1().RootShards(rs.Namespace).Update(ctx, rs, metav1.UpdateOptions{FieldManager: controller.FieldManager})
	return err
}

// lastBootstrapUser reports whether no other live RootShard of the namespace uses the
// namespace bootstrap PKI.
func (c *Controller) lastBootstrapUser(rs *operatorv1alpha1.RootShard) bool {
	all, err := c.rootShards.RootShards(rs.Namespace).List(everything)
	if err != nil {
		return false
	}
	for _, other := range all {
		if other.Name != rs.Name && other.DeletionTimestamp == nil && other.Spec.Certificates == nil {
			return false
		}
	}
	return true
}
