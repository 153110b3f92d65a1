// Package shard realizes Shards in the host cluster: their certificates, signed by their
// RootShard's CAs, their kubeconfigs and their kcp server, and reports back through status.
// A Shard whose RootShard does not exist yet says so, and heals when it appears.
package shard

import (
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// Controller reconciles Shards.
type Controller struct {
	controller.Base[*operatorv1alpha1.Shard, operatorv1alpha1.ShardStatus]
}

// New sets up a Shard controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.Shard)

// EtcdClaims are the volume claims of the Shard's managed etcd (controller.EtcdOwner).
func (c *Controller) EtcdClaims(s *operatorv1alpha1.Shard) []string { return shard.EtcdClaimNames(s) }
