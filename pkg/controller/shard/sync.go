package shard

import (
	"context"
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// sync brings the host cluster in line with one Shard and reports back in its status.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // not a key of ours; nothing will ever make it one
	}
	s, err := c.shards.Shards(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if s.DeletionTimestamp != nil {
		return c.finalize(ctx, s)
	}
	if !slices.Contains(s.Finalizers, Finalizer) {
		s = s.DeepCopy()
		s.Finalizers = append(s.Finalizers, Finalizer)
		_, err := c.client.OperatorV1alpha1().Shards(namespace).Update(ctx, s, metav1.UpdateOptions{FieldManager: controller.FieldManager})
		return err
	}

	status := *s.Status.DeepCopy()
	status.ObservedGeneration = s.Generation
	set := func(t string, st metav1.ConditionStatus, reason, message string) {
		controller.SetCondition(&status.Conditions, s.Generation, t, st, reason, message)
	}

	rs, err := c.rootShards.RootShards(namespace).Get(rootShardName(s))
	if apierrors.IsNotFound(err) {
		// Kubernetes is eventually consistent: the RootShard may come later, and its
		// informer event brings the Shard back then.
		msg := controller.SetRootShardMissing(&status.Conditions, s.Generation, namespace, rootShardName(s))
		status.Phase = operatorv1alpha1.PhaseProvisioning
		if !apiequality.Semantic.DeepEqual(s.Status, status) {
			c.recorder.Event(s, "Warning", controller.ReasonRootShardNotFound, msg)
		}
		return c.updateStatus(ctx, s, status)
	}
	if err != nil {
		return err
	}

	certs := shard.Certificates(s, rs)
	wrote, err := c.realize(ctx, s, rs)
	if err != nil {
		c.recorder.Eventf(s, "Warning", "ReconcileFailed", "%v", err)
		return err
	}
	if wrote > 0 {
		c.recorder.Eventf(s, "Normal", "Applied", "Applied %d object(s) to the host cluster", wrote)
	}

	set(operatorv1alpha1.ConditionReferenceValid, metav1.ConditionTrue, controller.ReasonReferencesFound, "every referenced object exists")
	if k := shard.Shard(s, rs); k.Cache != nil {
		if _, err := c.cacheServers.CacheServers(namespace).Get(k.Cache.Name); apierrors.IsNotFound(err) {
			set(operatorv1alpha1.ConditionReferenceValid, metav1.ConditionFalse, controller.ReasonCacheServerNotFound,
				fmt.Sprintf("CacheServer %q does not exist in namespace %q", k.Cache.Name, namespace))
		}
	}
	controller.SetCertificatesReady(&status.Conditions, s.Generation, len(certs), c.host.PendingCertificates(certs))
	available, reason, message := c.host.ShardAvailable(shard.Shard(s, rs))
	set(operatorv1alpha1.ConditionAvailable, available, reason, message)
	status.Phase = controller.Phase(status.Conditions)
	return c.updateStatus(ctx, s, status)
}

// realize applies the Shard's certificates, its kubeconfig toward the root shard, and its
// kcp server, and returns how many objects it wrote.
func (c *Controller) realize(ctx context.Context, s *operatorv1alpha1.Shard, rs *operatorv1alpha1.RootShard) (int, error) {
	wrote, err := c.host.ApplyCertificates(ctx, nil, shard.Certificates(s, rs))
	if err != nil {
		return wrote, err
	}
	toRoot, err := shard.ClientKubeconfig(s, rs)
	if err != nil {
		return wrote, err
	}
	w, err := c.host.SecretApplier.ApplyIfChanged(ctx, toRoot)
	if err != nil {
		return wrote, err
	}
	if w {
		wrote++
	}
	n, err := c.host.RealizeShard(ctx, shard.Shard(s, rs))
	return wrote + n, err
}

// updateStatus writes the status only when it changed.
func (c *Controller) updateStatus(ctx context.Context, s *operatorv1alpha1.Shard, status operatorv1alpha1.ShardStatus) error {
	if apiequality.Semantic.DeepEqual(s.Status, status) {
		return nil
	}
	s = s.DeepCopy()
	s.Status = status
	_, err := c.client.OperatorV1alpha1().Shards(s.Namespace).UpdateStatus(ctx, s, metav1.UpdateOptions{FieldManager: controller.FieldManager})
	return err
}

// finalize removes everything the controller created for a Shard that is being deleted,
// and only that, then lets the Shard go.
func (c *Controller) finalize(ctx context.Context, s *operatorv1alpha1.Shard) error {
	if !slices.Contains(s.Finalizers, Finalizer) {
		return nil
	}
	if s.Status.Phase != operatorv1alpha1.PhaseDeleting {
		status := *s.Status.DeepCopy()
		status.Phase = operatorv1alpha1.PhaseDeleting
		controller.SetCondition(&status.Conditions, s.Generation, operatorv1alpha1.ConditionAvailable, metav1.ConditionFalse,
			controller.ReasonDeleting, "the shard is being deleted")
		if err := c.updateStatus(ctx, s, status); err != nil {
			return err
		}
	}
	owned := controller.OwnedSelector(shard.Kind, s.Name)
	if err := c.host.DeleteOwned(ctx, s.Namespace, owned); err != nil {
		return err
	}
	c.recorder.Event(s, "Normal", "Cleaned", "Deleted the Deployment, Service, Certificates and Secrets of the shard")
	s = s.DeepCopy()
	s.Finalizers = slices.DeleteFunc(s.Finalizers, func(f string) bool { return f == Finalizer })
	_, err := c.client.OperatorV1alpha1().Shards(s.Namespace).Update(ctx, s, metav1.UpdateOptions{FieldManager: controller.FieldManager})
	return err
}
