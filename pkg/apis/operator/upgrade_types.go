package operator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UpgradeGroup is a group of a setup's components that an ordered roll moves to a new kcp
// release together (docs/kcp-versions.md, "Upgrading a setup").
type UpgradeGroup string

// The groups, in the order a roll moves them.
const (
	UpgradeGroupCacheServer      UpgradeGroup = "CacheServer"
	UpgradeGroupRootShard        UpgradeGroup = "RootShard"
	UpgradeGroupShard            UpgradeGroup = "Shard"
	UpgradeGroupVirtualWorkspace UpgradeGroup = "VirtualWorkspace"
	UpgradeGroupFrontProxy       UpgradeGroup = "FrontProxy"
)

// AutoUpdatePolicy says what a maintenance window may change on its own.
type AutoUpdatePolicy string

const (
	// AutoUpdateNone changes nothing on its own (the default).
	AutoUpdateNone AutoUpdatePolicy = "None"
	// AutoUpdatePatch moves the setup to the newest patch of its minor that the server knows.
	AutoUpdatePatch AutoUpdatePolicy = "Patch"
)

// UpgradeStrategy shapes how a change of a RootShard's spec.version rolls through its setup.
type UpgradeStrategy struct {
	// Paused stops a roll before its next group: the groups already moved stay moved, nothing
	// further changes until it is false again.
	Paused bool
	// ProgressDeadlineSeconds is how long a group may take to be rolled out and Available
	// before the roll halts at it (default 600).
	ProgressDeadlineSeconds *int32
}

// MaintenanceWindow is a weekly time window.
type MaintenanceWindow struct {
	// Days are the weekdays on which the window opens (Monday … Sunday); every day when empty.
	Days []string
	// Start is when the window opens, "HH:MM" in TimeZone.
	Start string
	// Duration is how long the window stays open, at least 30m and at most 24h. A window may
	// run past midnight.
	Duration metav1.Duration
	// TimeZone is an IANA time zone name (Europe/Berlin); UTC when empty.
	TimeZone string
}

// Maintenance declares when the server may change a setup on its own, and what.
type Maintenance struct {
	// Window is the weekly maintenance window.
	Window MaintenanceWindow
	// AutoUpdate is None (the default) or Patch: inside the window the server sets
	// spec.version to the newest patch of its minor that it knows, and the ordered roll
	// follows.
	AutoUpdate AutoUpdatePolicy
}

// SetupVersion is the kcp release of a RootShard's setup and the state of its roll. Only the
// server writes it.
type SetupVersion struct {
	// Current is the release the setup's components ran before the roll under way, or run
	// when none is.
	Current string
	// Target is the release the setup rolls to: spec.version as last seen.
	Target string
	// Group is the group that rolls now; empty when no roll is under way.
	Group UpgradeGroup
	// GroupStartTime is when Group started to roll.
	GroupStartTime *metav1.Time
	// Components are the setup's components with the release each is to run and runs.
	Components []ComponentVersion
	// NextWindowStart is when the next maintenance window opens.
	NextWindowStart *metav1.Time
	// NextWindowVersion is the release the next maintenance window will move the setup to;
	// empty when it has nothing to apply.
	NextWindowVersion string
}

// ComponentVersion is the release of one component of a setup.
type ComponentVersion struct {
	// Kind is CacheServer, RootShard, Shard, VirtualWorkspace or FrontProxy.
	Kind string
	// Name is the component's name in the RootShard's namespace.
	Name string
	// Desired is the release the roll has given it: what its controller builds.
	Desired string
	// Running is the release its Deployment runs, once rolled out; empty while it rolls.
	Running string
	// Pinned says that the component pins its own spec.image.tag, which the roll leaves.
	Pinned bool
}
