// Package rootshard realizes RootShards in the host cluster: their PKI as cert-manager
// objects now, their workloads next, and reports back through status.
package rootshard

import (
	"sync"
	"time"

	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
)

// Controller reconciles RootShards.
type Controller struct {
	kinds.RootShardBase
	// now, when set, is the time the roll reads (a test's clock); else time.Now.
	now func() time.Time
	// announced are the halts whose UpgradeHalted Event is recorded, by RootShard UID (the
	// roll's target, group and the group's start), so that a reconcile that reads the
	// RootShard from before the halt's status write reached the cache records no second
	// Event for the same halt.
	announced sync.Map
}

// New sets up a RootShard controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.RootShard)
