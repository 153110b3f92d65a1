package upgrade

import (
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// Member is a component of a setup as the roll sees it.
type Member struct {
	// Group is the member's group, Kind and Name its object (status.version.components).
	Group      operatorv1alpha1.UpgradeGroup
	Kind, Name string
	// Pinned is the member's own spec.image.tag (for the RootShard's internal proxy, its
	// spec.proxy.image.tag), "" when it follows the setup.
	Pinned string
	// Running is the image tag its Deployment's kcp container runs now, "" when it has no
	// Deployment yet.
	Running string
}

// Tag is the image tag member m of the setup of rs is built with: what its controller writes
// into a copy of its spec.image.tag before building, and what a preview builds it with. ""
// means the builders' default, as for a component outside any versioned setup.
//  1. A member that pins a tag keeps it.
//  2. Without rs or its spec.version, "".
//  3. The release the roll recorded for it (status.version.components[].desired).
//  4. A member not recorded yet keeps what its Deployment runs; without a Deployment it
//     starts at the release its group has now: the target once the roll has reached its
//     group (or none is under way), else the release before the roll.
func Tag(rs *operatorv1alpha1.RootShard, m Member) string {
	if m.Pinned != "" {
		return m.Pinned
	}
	if rs == nil || rs.Spec.Version == "" {
		return ""
	}
	v := rs.Status.Version
	if v == nil {
		if m.Running != "" {
			return m.Running
		}
		return rs.Spec.Version
	}
	for _, c := range v.Components {
		if c.Kind == m.Kind && c.Name == m.Name && c.Desired != "" {
			return c.Desired
		}
	}
	switch {
	case m.Running != "":
		return m.Running
	case v.Group == "" || Index(m.Group) <= Index(v.Group):
		return orElse(v.Target, rs.Spec.Version)
	default:
		return orElse(v.Current, rs.Spec.Version)
	}
}

func orElse(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
