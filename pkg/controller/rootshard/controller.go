// Package rootshard realizes RootShards in the host cluster: their PKI as cert-manager
// objects now, their workloads next, and reports back through status.
package rootshard

import (
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// Controller reconciles RootShards.
type Controller struct {
	controller.Base[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus]
}

// New sets up a RootShard controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.RootShard)

// EtcdClaims are the volume claims of the RootShard's managed etcd (controller.EtcdOwner).
func (c *Controller) EtcdClaims(rs *operatorv1alpha1.RootShard) []string {
	return rootshard.Etcd(rs).ClaimNames()
}
