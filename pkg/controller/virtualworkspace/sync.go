package virtualworkspace

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
	"github.com/kcp-setups/apiserver/pkg/resources/virtualworkspace"
)

// Reconcile realizes a VirtualWorkspace once its target exists, and observes the result.
func (c *Controller) Reconcile(ctx context.Context, obj *operatorv1alpha1.VirtualWorkspace, status *operatorv1alpha1.VirtualWorkspaceStatus) error {
	// The release of its setup's roll (docs/kcp-versions.md, "Upgrading a setup").
	obj = kinds.VirtualWorkspaceRelease.Built(c.Indexes, c.Host.Deployments, obj)
	target, miss, err := c.target(obj, nil)
	if err != nil {
		return err
	}
	if miss != nil {
		// Kubernetes is eventually consistent: the target may come later.
		c.ReferenceMissing(obj, status, miss.reason, miss.message, miss.what)
		return nil
	}
	vw := virtualworkspace.VirtualWorkspace{VirtualWorkspace: obj, Target: target}
	wrote, err := c.realize(ctx, vw)
	c.Applied(obj, wrote, err)
	if err != nil {
		return err
	}
	c.SetCondition(obj, status, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionTrue, operatorv1alpha1.ReasonReferencesFound, "every referenced object exists")
	if target.Cache != nil {
		if _, err := kinds.CacheServer.Lister(c.Indexes, obj.Namespace).Get(target.Cache.Name); apierrors.IsNotFound(err) {
			c.SetCondition(obj, status, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionFalse, operatorv1alpha1.ReasonCacheServerNotFound,
				fmt.Sprintf("CacheServer %q does not exist in namespace %q", target.Cache.Name, obj.Namespace))
		}
	}
	certs := vw.Certificates()
	c.Observe(obj, status, len(certs), c.Host.PendingCertificates(certs), vw.DeploymentName())
	return nil
}

// Plan is what a reconcile of the VirtualWorkspace obj writes to the host cluster
// (controller.Plan), with rs in place of its target's stored RootShard when set.
func (c *Controller) Plan(ctx context.Context, obj *operatorv1alpha1.VirtualWorkspace, rs *operatorv1alpha1.RootShard) (*hostcluster.Plan, error) {
	// Built as Reconcile builds it (a tag the preview gave it is kept, as a pinned one).
	obj = kinds.VirtualWorkspaceRelease.Built(c.Indexes, c.Host.Deployments, obj)
	target, miss, err := c.target(obj, rs)
	if err != nil {
		return nil, err
	}
	if miss != nil {
		return nil, errors.New(miss.message)
	}
	vw := virtualworkspace.VirtualWorkspace{VirtualWorkspace: obj, Target: target}
	return controller.Plan(ctx, func(ctx context.Context) (int, error) { return c.realize(ctx, vw) })
}

// realize applies the VirtualWorkspace's certificates, its client CA bundle, its kubeconfigs,
// Service and Deployment, and returns how many objects it wrote. The Deployment is created
// once what it mounts exists, and rolls when that changes.
func (c *Controller) realize(ctx context.Context, vw virtualworkspace.VirtualWorkspace) (int, error) {
	w := c.Host.Writes(ctx)
	w.Certificates(nil, vw.Certificates())
	// Its own CA bundles, on top of what its target trusts.
	w.ExtraBundles(vw.Namespace,
		hostcluster.ExtraBundle{Extra: vw.Spec.ClientCABundleRef, Base: vw.Target.ClientCASecret(), Build: vw.MergedClientCA},
		hostcluster.ExtraBundle{Extra: vw.Spec.CABundleSecretRef, Base: vw.TargetServerCABundle(), Build: vw.MergedCABundle})
	kubeconfigs, err := vw.Kubeconfigs()
	w.BuiltSecrets(kubeconfigs, err)
	// An identity the spec stopped needing (kubeconfigSecretRef given, a release without the
	// external admin) goes, key and all.
	keep := []string{vw.MergedClientCAName(), vw.MergedCABundleName()}
	for _, cert := range vw.Certificates() {
		keep = append(keep, *cert.Name)
	}
	for _, secret := range kubeconfigs {
		keep = append(keep, *secret.Name)
	}
	w.Do(func(ctx context.Context) (int, error) {
		return c.Host.PruneOwned(ctx, vw.Namespace, virtualworkspace.Kind, vw.Name, keep)
	})
	w.Services(vw.Service())
	w.DeploymentWhenMounted(vw.Namespace, vw.DeploymentName(), vw.Mounts(), vw.Deployment)
	return w.Done()
}

// Watches are what a VirtualWorkspace's reconcile reads.
func (c *Controller) Watches() controller.Watches {
	return controller.Watches{
		Kinds: []controller.Reference{
			// A target appearing heals its VirtualWorkspaces; its spec changes theirs (image,
			// addresses, cache, bundles).
			{Kind: kinds.RootShard, Keys: func(m metav1.Object) []string { return c.ofRootShard(m.GetNamespace(), m.GetName()) }},
			{Kind: kinds.Shard, Keys: func(m metav1.Object) []string { return c.ofShard(m.GetNamespace(), m.GetName()) }},
			{Kind: kinds.CacheServer, Keys: c.InNamespace},
		},
		// What the VirtualWorkspace owns, and what its target owns that it mounts (CAs,
		// bundles, the cache's kubeconfig).
		Host: []controller.HostResource{controller.Secrets, controller.Services, controller.Deployments,
			controller.DisruptionBudgets, controller.Certificates},
		Users: c.users,
	}
}

// users are the VirtualWorkspaces a host object concerns besides its owner: those of the
// RootShard or Shard that owns it, or every VirtualWorkspace of the namespace for a
// CacheServer's.
func (c *Controller) users(m metav1.Object) []string {
	l := m.GetLabels()
	switch {
	case l[pki.OwnerLabel(rootshard.Kind)] != "":
		return c.ofRootShard(m.GetNamespace(), l[pki.OwnerLabel(rootshard.Kind)])
	case l[pki.OwnerLabel(shard.Kind)] != "":
		return c.ofShard(m.GetNamespace(), l[pki.OwnerLabel(shard.Kind)])
	case l[pki.OwnerLabel(cacheserver.Kind)] != "":
		return c.InNamespace(m)
	}
	return nil
}

// ofRootShard are the VirtualWorkspaces whose PKI is a RootShard's: those that serve it, and
// those that serve one of its Shards.
func (c *Controller) ofRootShard(namespace, rootShard string) []string {
	return controller.Matching(kinds.VirtualWorkspacesOf(c.Indexes, namespace, rootShard), func(*operatorv1alpha1.VirtualWorkspace) bool { return true })
}

// ofShard are the VirtualWorkspaces that serve a Shard.
func (c *Controller) ofShard(namespace, name string) []string {
	return c.Keys(controller.TargetIndex, controller.TargetValue(namespace, shard.Kind, name))
}
