package v1alpha1

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
	// +optional
	Paused bool `json:"paused,omitempty" protobuf:"varint,1,opt,name=paused"`
	// ProgressDeadlineSeconds is how long a group may take to be rolled out and Available
	// before the roll halts at it (default 600).
	// +optional
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty" protobuf:"varint,2,opt,name=progressDeadlineSeconds"`
}

// MaintenanceWindow is a weekly time window.
type MaintenanceWindow struct {
	// Days are the weekdays on which the window opens (Monday … Sunday); every day when empty.
	// +optional
	// +listType=set
	Days []string `json:"days,omitempty" protobuf:"bytes,1,rep,name=days"`
	// Start is when the window opens, "HH:MM" in TimeZone.
	Start string `json:"start" protobuf:"bytes,2,opt,name=start"`
	// Duration is how long the window stays open, at least 30m and at most 24h. A window may
	// run past midnight.
	Duration metav1.Duration `json:"duration" protobuf:"bytes,3,opt,name=duration"`
	// TimeZone is an IANA time zone name (Europe/Berlin); UTC when empty.
	// +optional
	TimeZone string `json:"timeZone,omitempty" protobuf:"bytes,4,opt,name=timeZone"`
}

// Maintenance declares when the server may change a setup on its own, and what.
type Maintenance struct {
	// Window is the weekly maintenance window.
	Window MaintenanceWindow `json:"window" protobuf:"bytes,1,opt,name=window"`
	// AutoUpdate is None (the default) or Patch: inside the window the server sets
	// spec.version to the newest patch of its minor that it knows, and the ordered roll
	// follows.
	// +optional
	AutoUpdate AutoUpdatePolicy `json:"autoUpdate,omitempty" protobuf:"bytes,2,opt,name=autoUpdate,casttype=AutoUpdatePolicy"`
}

// SetupVersion is the kcp release of a RootShard's setup and the state of its roll. Only the
// server writes it.
type SetupVersion struct {
	// Current is the release the setup's components ran before the roll under way, or run
	// when none is.
	// +optional
	Current string `json:"current,omitempty" protobuf:"bytes,1,opt,name=current"`
	// Target is the release the setup rolls to: spec.version as last seen.
	// +optional
	Target string `json:"target,omitempty" protobuf:"bytes,2,opt,name=target"`
	// Group is the group that rolls now; empty when no roll is under way.
	// +optional
	Group UpgradeGroup `json:"group,omitempty" protobuf:"bytes,3,opt,name=group,casttype=UpgradeGroup"`
	// GroupStartTime is when Group started to roll.
	// +optional
	GroupStartTime *metav1.Time `json:"groupStartTime,omitempty" protobuf:"bytes,4,opt,name=groupStartTime"`
	// Components are the setup's components with the release each is to run and runs.
	// +optional
	// +listType=map
	// +listMapKey=kind
	// +listMapKey=name
	Components []ComponentVersion `json:"components,omitempty" protobuf:"bytes,5,rep,name=components"`
	// NextWindowStart is when the next maintenance window opens.
	// +optional
	NextWindowStart *metav1.Time `json:"nextWindowStart,omitempty" protobuf:"bytes,6,opt,name=nextWindowStart"`
	// NextWindowVersion is the release the next maintenance window will move the setup to;
	// empty when it has nothing to apply.
	// +optional
	NextWindowVersion string `json:"nextWindowVersion,omitempty" protobuf:"bytes,7,opt,name=nextWindowVersion"`
}

// ComponentVersion is the release of one component of a setup.
type ComponentVersion struct {
	// Kind is CacheServer, RootShard, Shard, VirtualWorkspace or FrontProxy.
	Kind string `json:"kind" protobuf:"bytes,1,opt,name=kind"`
	// Name is the component's name in the RootShard's namespace.
	Name string `json:"name" protobuf:"bytes,2,opt,name=name"`
	// Desired is the release the roll has given it: what its controller builds.
	// +optional
	Desired string `json:"desired,omitempty" protobuf:"bytes,3,opt,name=desired"`
	// Running is the release its Deployment runs, once rolled out; empty while it rolls.
	// +optional
	Running string `json:"running,omitempty" protobuf:"bytes,4,opt,name=running"`
	// Pinned says that the component pins its own spec.image.tag, which the roll leaves.
	// +optional
	Pinned bool `json:"pinned,omitempty" protobuf:"varint,5,opt,name=pinned"`
}
