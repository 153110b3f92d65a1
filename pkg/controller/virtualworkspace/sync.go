package virtualworkspace

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
	"github.com/kcp-setups/apiserver/pkg/resources/virtualworkspace"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// sync brings the host cluster in line with one VirtualWorkspace and reports back in its
// status.
func (c *Controller) sync(ctx context.Context, key string) error {
	l := c.lifecycle()
	return l.Sync(ctx, key, l.RequiringCertManager(c.reconcile))
}

// lifecycle is the VirtualWorkspace's finalizer, status and deletion.
func (c *Controller) lifecycle() controller.Lifecycle[*operatorv1alpha1.VirtualWorkspace, operatorv1alpha1.VirtualWorkspaceStatus] {
	opts := metav1.UpdateOptions{FieldManager: controller.FieldManager}
	return controller.Lifecycle[*operatorv1alpha1.VirtualWorkspace, operatorv1alpha1.VirtualWorkspaceStatus]{
		Kind: virtualworkspace.Kind, Noun: "virtual workspace", Finalizer: Finalizer,
		Get: func(ns, name string) (*operatorv1alpha1.VirtualWorkspace, error) {
			return c.virtualWorkspaces.VirtualWorkspaces(ns).Get(name)
		},
		Update: func(ctx context.Context, vw *operatorv1alpha1.VirtualWorkspace) (*operatorv1alpha1.VirtualWorkspace, error) {
			return c.client.OperatorV1alpha1().VirtualWorkspaces(vw.Namespace).Update(ctx, vw, opts)
		},
		UpdateStatus: func(ctx context.Context, vw *operatorv1alpha1.VirtualWorkspace) (*operatorv1alpha1.VirtualWorkspace, error) {
			return c.client.OperatorV1alpha1().VirtualWorkspaces(vw.Namespace).UpdateStatus(ctx, vw, opts)
		},
		Status: func(vw *operatorv1alpha1.VirtualWorkspace) *operatorv1alpha1.VirtualWorkspaceStatus {
			return &vw.Status
		},
		Common: func(s *operatorv1alpha1.VirtualWorkspaceStatus) controller.Common {
			return controller.Common{Phase: &s.Phase, ObservedGeneration: &s.ObservedGeneration, Conditions: &s.Conditions}
		},
		Host: c.host, Recorder: c.recorder,
	}
}

// missing is why a VirtualWorkspace's target cannot be resolved yet.
type missing struct{ reason, message, what string }

// target resolves the root shard or shard a VirtualWorkspace serves, as the kcp builders see
// it, or says what is missing.
func (c *Controller) target(vw *operatorv1alpha1.VirtualWorkspace) (kcp.Server, *missing, error) {
	ns := vw.Namespace
	rootShard := func(name string) (*operatorv1alpha1.RootShard, *missing, error) {
		rs, err := c.rootShards.RootShards(ns).Get(name)
		if apierrors.IsNotFound(err) {
			return nil, &missing{controller.ReasonRootShardNotFound,
				fmt.Sprintf("RootShard %q does not exist in namespace %q", name, ns), "RootShard"}, nil
		}
		return rs, nil, err
	}
	switch t := vw.Spec.Target; {
	case t.RootShardRef != nil:
		rs, miss, err := rootShard(t.RootShardRef.Name)
		if rs == nil {
			return kcp.Server{}, miss, err
		}
		return rootshard.Server(rs), nil, nil
	case t.ShardRef != nil:
		s, err := c.shards.Shards(ns).Get(t.ShardRef.Name)
		if apierrors.IsNotFound(err) {
			return kcp.Server{}, &missing{controller.ReasonShardNotFound,
				fmt.Sprintf("Shard %q does not exist in namespace %q", t.ShardRef.Name, ns), "Shard"}, nil
		}
		if err != nil {
			return kcp.Server{}, nil, err
		}
		rs, miss, err := rootShard(controller.ShardRootShard(s))
		if rs == nil {
			return kcp.Server{}, miss, err
		}
		return shard.Server(s, rs), nil, nil
	}
	// Validation requires exactly one target; an object stored before it did waits.
	return kcp.Server{}, &missing{controller.ReasonRootShardNotFound, "spec.target names neither a RootShard nor a Shard", "target"}, nil
}

// reconcile realizes a VirtualWorkspace once its target exists, and observes the result.
func (c *Controller) reconcile(ctx context.Context, obj *operatorv1alpha1.VirtualWorkspace, status *operatorv1alpha1.VirtualWorkspaceStatus) error {
	l := c.lifecycle()
	target, miss, err := c.target(obj)
	if err != nil {
		return err
	}
	if miss != nil {
		// Kubernetes is eventually consistent: the target may come later.
		l.ReferenceMissing(obj, status, miss.reason, miss.message, miss.what)
		return nil
	}
	vw := virtualworkspace.VirtualWorkspace{VirtualWorkspace: obj, Target: target}
	wrote, err := c.realize(ctx, vw)
	l.Applied(obj, wrote, err)
	if err != nil {
		return err
	}
	l.SetCondition(obj, status, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionTrue, controller.ReasonReferencesFound, "every referenced object exists")
	if target.Cache != nil {
		if _, err := c.cacheServers.CacheServers(obj.Namespace).Get(target.Cache.Name); apierrors.IsNotFound(err) {
			l.SetCondition(obj, status, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionFalse, controller.ReasonCacheServerNotFound,
				fmt.Sprintf("CacheServer %q does not exist in namespace %q", target.Cache.Name, obj.Namespace))
		}
	}
	certs := vw.Certificates()
	l.Observe(obj, status, len(certs), c.host.PendingCertificates(certs), vw.DeploymentName())
	return nil
}

// realize applies the VirtualWorkspace's certificates, its client CA bundle, its kubeconfigs,
// Service and Deployment, and returns how many objects it wrote. The Deployment is created
// once what it mounts exists, and rolls when that changes.
func (c *Controller) realize(ctx context.Context, vw virtualworkspace.VirtualWorkspace) (int, error) {
	wrote, err := c.host.ApplyCertificates(ctx, nil, vw.Certificates())
	if err != nil {
		return wrote, err
	}
	n, err := c.realizeBundles(ctx, vw)
	wrote += n
	if err != nil {
		return wrote, err
	}
	kubeconfigs, err := vw.Kubeconfigs()
	if err != nil {
		return wrote, err
	}
	n, err = c.host.ApplyBundles(ctx, kubeconfigs...)
	wrote += n
	if err != nil {
		return wrote, err
	}
	// An identity the spec stopped needing (kubeconfigSecretRef given, a release without the
	// external admin) goes, key and all.
	keep := []string{vw.MergedClientCAName(), vw.MergedCABundleName()}
	for _, cert := range vw.Certificates() {
		keep = append(keep, *cert.Name)
	}
	for _, secret := range kubeconfigs {
		keep = append(keep, *secret.Name)
	}
	n, err = c.host.PruneOwned(ctx, vw.Namespace, virtualworkspace.Kind, vw.Name, keep)
	wrote += n
	if err != nil {
		return wrote, err
	}
	w, err := c.host.ServiceApplier.ApplyIfChanged(ctx, vw.Service())
	if err != nil {
		return wrote, err
	}
	wrote += controller.Count(w)

	current, err := c.host.Deployments.Deployments(vw.Namespace).Get(vw.DeploymentName())
	if apierrors.IsNotFound(err) {
		current, err = nil, nil
	}
	if err != nil {
		return wrote, err
	}
	versions := c.host.MountedVersions(vw.Namespace, slices.Concat(vw.MountedSecrets(), vw.UsersSecrets()))
	for _, name := range vw.MountedSecrets() {
		if _, ok := versions[name]; !ok && current == nil {
			return wrote, nil // created once everything it mounts exists
		}
	}
	n, err = c.host.ApplyWorkload(ctx, vw.Deployment(current, workload.SecretsHash(versions)))
	return wrote + n, err
}

// realizeBundles writes the VirtualWorkspace's own CA bundles, for its clientCABundleRef and
// caBundleSecretRef, on top of what its target trusts. Until that is written there is nothing
// to add to: its event brings the VirtualWorkspace back, and the Deployment waits for the
// bundles it mounts.
func (c *Controller) realizeBundles(ctx context.Context, vw virtualworkspace.VirtualWorkspace) (int, error) {
	var bundles []*corev1ac.SecretApplyConfiguration
	for _, b := range []struct {
		ref   *corev1.LocalObjectReference
		base  string
		build func(base, extra []byte) *corev1ac.SecretApplyConfiguration
	}{
		{vw.Spec.ClientCABundleRef, vw.Target.ClientCASecret(), vw.MergedClientCA},
		{vw.Spec.CABundleSecretRef, vw.TargetServerCABundle(), vw.MergedCABundle},
	} {
		if b.ref == nil {
			continue
		}
		base, found, err := c.host.OwnCABundle(vw.Namespace, b.base)
		if err != nil || !found {
			return 0, err
		}
		extra, err := c.host.UsersCABundle(ctx, vw.Namespace, b.ref)
		if err != nil {
			return 0, err
		}
		bundles = append(bundles, b.build(base, extra))
	}
	return c.host.ApplyBundles(ctx, bundles...)
}
