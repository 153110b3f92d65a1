package rootshard

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// realizeProxy applies the RootShard's internal front proxy (frontproxy.RootShardProxy)
// after its PKI: its client CA bundle once the CAs are issued, its kubeconfig, path mappings
// and Service, then its Deployment once everything it mounts exists. Its certificates are
// among the RootShard's. It returns how many objects it wrote.
func (c *Controller) realizeProxy(ctx context.Context, rs *operatorv1alpha1.RootShard, bundles rootshard.CABundles, issued bool) (int, error) {
	p := frontproxy.RootShardProxy{RootShard: rs}
	wrote := 0
	if issued {
		w, err := c.Host.ApplyBundles(ctx, p.MergedClientCA(bundles.ClientCA, bundles.ExtraClientCAs))
		wrote += w
		if err != nil {
			return wrote, err
		}
	}
	kubeconfig, err := p.DynamicKubeconfig()
	if err != nil {
		return wrote, err
	}
	config, err := p.ConfigMap()
	if err != nil {
		return wrote, err
	}
	for _, apply := range []func() (bool, error){
		func() (bool, error) { return c.Host.SecretApplier.ApplyIfChanged(ctx, kubeconfig) },
		func() (bool, error) { return c.Host.ConfigMapApplier.ApplyIfChanged(ctx, config) },
		func() (bool, error) { return c.Host.ServiceApplier.ApplyIfChanged(ctx, p.Service()) },
	} {
		w, err := apply()
		wrote += controller.Count(w)
		if err != nil {
			return wrote, err
		}
	}
	current, err := c.Host.Deployments.Deployments(rs.Namespace).Get(p.DeploymentName())
	if apierrors.IsNotFound(err) {
		current, err = nil, nil
	}
	if err != nil {
		return wrote, err
	}
	versions := c.Host.MountedVersions(rs.Namespace, p.MountedSecrets())
	if current == nil {
		// Created before its Secrets, it would roll once per Secret issued; their events
		// bring the RootShard back.
		for _, name := range p.MountedSecrets() {
			if _, ok := versions[name]; !ok {
				return wrote, nil
			}
		}
	}
	if cm, err := c.Host.ConfigMaps.ConfigMaps(rs.Namespace).Get(p.ConfigMapName()); err == nil {
		versions["configmap/"+cm.Name] = cm.ResourceVersion
	} else if current == nil {
		return wrote, nil
	}
	n, err := c.Host.ApplyWorkload(ctx, p.Deployment(current, workload.SecretsHash(versions)))
	return wrote + n, err
}
