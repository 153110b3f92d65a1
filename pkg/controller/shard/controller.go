// Package shard realizes Shards in the host cluster: their certificates, signed by their
// RootShard's CAs, their kubeconfigs and their kcp server, and reports back through status.
// A Shard whose RootShard does not exist yet says so, and heals when it appears.
package shard

import (
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
)

// Controller reconciles Shards.
type Controller struct {
	kinds.ShardBase
}

// New sets up a Shard controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.Shard)
