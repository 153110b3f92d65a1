package virtualworkspace

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
	"github.com/kcp-setups/apiserver/pkg/resources/virtualworkspace"
)

// missing is why a VirtualWorkspace's target cannot be resolved yet.
type missing struct{ reason, message, what string }

// target resolves the root shard or shard a VirtualWorkspace serves, as the kcp builders see
// it, or says what is missing.
func (c *Controller) target(vw *operatorv1alpha1.VirtualWorkspace) (kcp.Server, *missing, error) {
	ns := vw.Namespace
	rootShard := func(name string) (*operatorv1alpha1.RootShard, *missing, error) {
		rs, err := kinds.RootShard.Lister(c.Indexes, ns).Get(name)
		if apierrors.IsNotFound(err) {
			return nil, &missing{operatorv1alpha1.ReasonRootShardNotFound,
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
		s, err := kinds.Shard.Lister(c.Indexes, ns).Get(t.ShardRef.Name)
		if apierrors.IsNotFound(err) {
			return kcp.Server{}, &missing{operatorv1alpha1.ReasonShardNotFound,
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
	return kcp.Server{}, &missing{operatorv1alpha1.ReasonRootShardNotFound, "spec.target names neither a RootShard nor a Shard", "target"}, nil
}

// Reconcile realizes a VirtualWorkspace once its target exists, and observes the result.
func (c *Controller) Reconcile(ctx context.Context, obj *operatorv1alpha1.VirtualWorkspace, status *operatorv1alpha1.VirtualWorkspaceStatus) error {
	target, miss, err := c.target(obj)
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
