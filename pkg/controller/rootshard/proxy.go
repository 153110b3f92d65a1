package rootshard

import (
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// realizeProxy applies the RootShard's internal front proxy (frontproxy.RootShardProxy)
// after its PKI: its client CA bundle once the CAs are issued (bundles not nil), its
// kubeconfig, path mappings and Service, then its Deployment once everything it mounts
// exists. Its certificates are among the RootShard's.
func (c *Controller) realizeProxy(w *hostcluster.Writes, rs *operatorv1alpha1.RootShard, bundles *rootshard.CABundles) {
	p := frontproxy.RootShardProxy{RootShard: rs}
	if bundles != nil {
		w.Secrets(p.MergedClientCA(bundles.ClientCA, bundles.ExtraClientCAs))
	}
	w.Secret(p.DynamicKubeconfig())
	w.ConfigMap(p.ConfigMap())
	w.Services(p.Service())
	w.DeploymentWhenMounted(rs.Namespace, p.DeploymentName(), p.Mounts(), p.Deployment)
}
