// Package rootshard realizes RootShards in the host cluster: their PKI as cert-manager
// objects now, their workloads next, and reports back through status.
package rootshard

import (
	"time"

	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
)

// Controller reconciles RootShards.
type Controller struct {
	kinds.RootShardBase
	// now, when set, is the time the roll reads (a test's clock); else time.Now.
	now func() time.Time
}

// New sets up a RootShard controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.RootShard)
