// Package upgrade holds the rules of a setup's ordered roll to another kcp release: the
// order of its groups, which changes of release are refused, and the weekly maintenance
// window. It is pure: no I/O, and time comes from the caller (docs/kcp-versions.md,
// "Upgrading a setup").
package upgrade

import (
	"time"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// Order is the order in which a roll moves a setup's groups: every component a later group
// calls as a client is moved before it, so that no client ever runs a newer kcp than a server
// it talks to (docs/kcp-versions.md, "The order, and why").
//   - The cache server first: it serves the CRDs of the replicated resources from its own
//     release (pkg/cache/server/bootstrap), and every shard writes to it.
//   - The root shard next: it alone bootstraps the root workspace's APIExports and schemas
//     (pkg/server/server.go, configrootphase0 and configroot), which the other shards resolve
//     their identities from, and it holds the Shard objects they register in. The RootShard's
//     internal proxy rolls with it.
//   - The other shards: clients of the root shard and the cache server.
//   - The standalone virtual workspaces: clients of the shards and the cache server.
//   - The front proxies last: clients of every shard, and the users' entry point.
var Order = []operatorv1alpha1.UpgradeGroup{
	operatorv1alpha1.UpgradeGroupCacheServer,
	operatorv1alpha1.UpgradeGroupRootShard,
	operatorv1alpha1.UpgradeGroupShard,
	operatorv1alpha1.UpgradeGroupVirtualWorkspace,
	operatorv1alpha1.UpgradeGroupFrontProxy,
}

// Index is the position of g in Order, or -1.
func Index(g operatorv1alpha1.UpgradeGroup) int {
	for i, o := range Order {
		if o == g {
			return i
		}
	}
	return -1
}

// DefaultProgressDeadline is how long a group may take to roll out and be Available before
// the roll halts at it, when spec.upgrade.progressDeadlineSeconds is not set: a Deployment's
// own default.
const DefaultProgressDeadline = 600 * time.Second

// ProgressDeadline is the deadline of a group of a setup whose upgrade strategy is s.
func ProgressDeadline(s *operatorv1alpha1.UpgradeStrategy) time.Duration {
	if s == nil || s.ProgressDeadlineSeconds == nil {
		return DefaultProgressDeadline
	}
	return time.Duration(*s.ProgressDeadlineSeconds) * time.Second
}
