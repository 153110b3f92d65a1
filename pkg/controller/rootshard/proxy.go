package rootshard

import (
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// realizeProxy applies the RootShard's internal front proxy (frontproxy.RootShardProxy)
// after its PKI: its client CA bundle once the CAs are issued, its kubeconfig, path mappings
// and Service, then its Deployment once everything it mounts exists. Its certificates are
// among the RootShard's. It fails when what it writes cannot be built.
func (c *Controller) realizeProxy(w *hostcluster.Writes, rs *operatorv1alpha1.RootShard, bundles rootshard.CABundles, issued bool) error {
	p := frontproxy.RootShardProxy{RootShard: rs}
	if issued {
		w.Secrets(p.MergedClientCA(bundles.ClientCA, bundles.ExtraClientCAs))
	}
	kubeconfig, err := p.DynamicKubeconfig()
	if err != nil {
		return err
	}
	config, err := p.ConfigMap()
	if err != nil {
		return err
	}
	w.Secrets(kubeconfig)
	w.ConfigMap(config)
	w.Services(p.Service())
	w.DeploymentWhenMounted(rs.Namespace, p.DeploymentName(), hostcluster.Mounts{Required: p.MountedSecrets(), ConfigMap: p.ConfigMapName()},
		p.Deployment)
	return nil
}
