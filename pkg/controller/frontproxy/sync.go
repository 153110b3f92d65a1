package frontproxy

import (
	"fmt"

	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/virtualworkspace"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// sync brings the host cluster in line with one FrontProxy and reports back in its status.
func (c *Controller) sync(ctx context.Context, key string) error {
	return c.Reconciling(ctx, key, c.reconcile)
}

// reconcile realizes a FrontProxy once its RootShard exists, and observes the result.
func (c *Controller) reconcile(ctx context.Context, fp *operatorv1alpha1.FrontProxy, status *operatorv1alpha1.FrontProxyStatus) error {
	if fp.Spec.RootShard.SecretRef != nil {
		return c.reconcileJoined(ctx, fp, status)
	}
	rsName := ""
	if fp.Spec.RootShard.Reference != nil {
		rsName = fp.Spec.RootShard.Reference.Name
	}
	rs, err := c.RootShards.RootShards(fp.Namespace).Get(rsName)
	if apierrors.IsNotFound(err) {
		c.RootShardMissing(fp, status, rsName)
		return nil
	}
	if err != nil {
		return err
	}
	c.SetRootShard(fp, status, true, fmt.Sprintf("RootShard reference is valid: RootShard %q exists", rs.Name))

	f := frontproxy.FrontProxy{FrontProxy: fp, RootShard: rs, ServiceAccountIssuers: c.Host.ServiceAccountIssuers(rs, c.Indexes.ShardsOf(rs.Namespace, rs.Name))}
	// /services/ goes to the root shard's VirtualWorkspace once it can serve the root shard;
	// until then the root shard reports why, and the path stays with the root shard.
	vw, _, _, err := controller.ShardVirtualWorkspace(c.VirtualWorkspaces, rootshard.Kind, rs.Namespace, rs.Name, &rs.Spec.CommonShardSpec)
	if err != nil {
		return err
	}
	if vw != nil {
		f.ServicesBackend = virtualworkspace.VirtualWorkspace{VirtualWorkspace: vw}.ServiceURL()
	}
	return c.realizeAndObserve(ctx, f, status, nil)
}

// reconcileJoined realizes a FrontProxy whose spec.rootShard.secretRef names a copy of a
// front-proxy-join Secret: from the RootShard the copy describes, with local copies of its
// CAs; /services/ goes to that root shard. Until the copy is there and well-formed,
// ReferenceValid says why, and nothing is realized or removed.
func (c *Controller) reconcileJoined(ctx context.Context, fp *operatorv1alpha1.FrontProxy, status *operatorv1alpha1.FrontProxyStatus) error {
	joined, err := c.Host.Join(ctx, frontproxy.Kind, fp.Namespace, fp.Name, fp.Spec.RootShard.SecretRef, reference.FrontProxyJoin)
	if _, problem := controller.ReferenceProblem(err); err == nil || problem {
		c.SetJoinedRootShard(fp, status, fp.Spec.RootShard.SecretRef.Name, err)
	}
	if err != nil {
		return c.ReferenceInvalid(fp, status, err)
	}
	return c.realizeAndObserve(ctx, frontproxy.FrontProxy{FrontProxy: fp, RootShard: joined.RootShard}, status, joined)
}

// realizeAndObserve realizes the front proxy f (with the local CAs of a copy, when joined)
// and observes the host side.
func (c *Controller) realizeAndObserve(ctx context.Context, f frontproxy.FrontProxy, status *operatorv1alpha1.FrontProxyStatus, joined *reference.Joined) error {
	wrote := 0
	var err error
	if joined != nil {
		wrote, err = c.Host.ApplyJoined(ctx, *joined)
	}
	if err == nil {
		var n int
		n, err = c.realize(ctx, f)
		wrote += n
	}
	c.Applied(f.FrontProxy, wrote, err)
	if err != nil {
		return err
	}
	c.SetCondition(f.FrontProxy, status, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionTrue, controller.ReasonReferencesFound, "every referenced object exists")
	certs := f.Certificates()
	c.Observe(f.FrontProxy, status, len(certs), c.Host.PendingCertificates(certs), f.DeploymentName())
	return nil
}

// realize applies the front proxy's certificates, kubeconfig, path mappings, Service and
// Deployment, and returns how many objects it wrote. The Deployment is created once what it
// mounts exists, and rolls when that changes.
func (c *Controller) realize(ctx context.Context, f frontproxy.FrontProxy) (int, error) {
	wrote, err := c.Host.ApplyCertificates(ctx, nil, f.Certificates())
	if err != nil {
		return wrote, err
	}
	kubeconfig, err := f.DynamicKubeconfig()
	if err != nil {
		return wrote, err
	}
	config, err := f.ConfigMap()
	if err != nil {
		return wrote, err
	}
	n, err := c.realizeBundles(ctx, f)
	wrote += n
	if err != nil {
		return wrote, err
	}
	for _, apply := range []func() (bool, error){
		func() (bool, error) { return c.Host.SecretApplier.ApplyIfChanged(ctx, kubeconfig) },
		func() (bool, error) { return c.Host.ConfigMapApplier.ApplyIfChanged(ctx, config) },
		func() (bool, error) { return c.Host.ServiceApplier.ApplyIfChanged(ctx, f.Service()) },
	} {
		w, err := apply()
		if err != nil {
			return wrote, err
		}
		if w {
			wrote++
		}
	}

	current, err := c.Host.Deployments.Deployments(f.Namespace).Get(f.DeploymentName())
	if apierrors.IsNotFound(err) {
		current, err = nil, nil
	}
	if err != nil {
		return wrote, err
	}
	versions := c.Host.MountedVersions(f.Namespace, slices.Concat(f.MountedSecrets(), f.UsersSecrets(), f.ServiceAccountSecrets()))
	for _, name := range f.MountedSecrets() {
		if _, ok := versions[name]; !ok && current == nil {
			return wrote, nil // created once everything it mounts exists
		}
	}
	cm, err := c.Host.ConfigMaps.ConfigMaps(f.Namespace).Get(f.ConfigMapName())
	if err != nil {
		if current == nil {
			return wrote, nil
		}
	} else {
		versions["configmap/"+cm.Name] = cm.ResourceVersion
	}
	n, err = c.Host.ApplyWorkload(ctx, f.Deployment(current, workload.SecretsHash(versions)))
	return wrote + n, err
}

// realizeBundles writes the front proxy's own CA bundles, for its clientCABundleRef and
// caBundleSecretRef, on top of its RootShard's merged ones. Until the RootShard wrote those,
// there is nothing to add to: their events bring the FrontProxy back, and its Deployment
// waits for its bundles.
func (c *Controller) realizeBundles(ctx context.Context, f frontproxy.FrontProxy) (int, error) {
	var bundles []*corev1ac.SecretApplyConfiguration
	for _, b := range []struct {
		ref       *corev1.LocalObjectReference
		rootShard string
		build     func(rootShard, extra []byte) *corev1ac.SecretApplyConfiguration
	}{
		{f.Spec.ClientCABundleRef, kcp.MergedClientCAName(f.RootShard), f.MergedClientCA},
		{f.Spec.CABundleSecretRef, rootshard.MergedCABundleName(f.RootShard), f.MergedCABundle},
	} {
		if b.ref == nil {
			continue
		}
		base, found, err := c.Host.OwnCABundle(f.Namespace, b.rootShard)
		if err != nil || !found {
			return 0, err
		}
		extra, err := c.Host.UsersCABundle(ctx, f.Namespace, b.ref)
		if err != nil {
			return 0, err
		}
		bundles = append(bundles, b.build(base, extra))
	}
	return c.Host.ApplyBundles(ctx, bundles...)
}
