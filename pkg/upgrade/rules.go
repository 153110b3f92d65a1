package upgrade

import (
	"fmt"

	"github.com/kcp-setups/apiserver/pkg/kcpversion"
)

// The rules a change of a setup's release must keep, refused before anything changes
// (docs/kcp-versions.md, "Refused before anything changes"). Each returns the reason, which
// the registry puts in a 422 at the field that asks for the change.

// ReleaseNames are kcpversion.Releases as a refusal lists them.
func ReleaseNames() []string {
	names := make([]string, len(kcpversion.Releases))
	for i, r := range kcpversion.Releases {
		names[i] = r.String()
	}
	return names
}

// Runs are the releases named by tags, what the members of a setup run or are to run;
// empty tags and tags that name no release (main, a digest) are left out, since nothing can
// be said of them.
func Runs(tags ...string) []kcpversion.Version {
	var runs []kcpversion.Version
	for _, t := range tags {
		if t == "" {
			continue
		}
		if v := kcpversion.FromTag(t); !v.IsLatest() {
			runs = append(runs, v)
		}
	}
	return runs
}

// CheckChange refuses to move a setup whose members run or are to run the releases from to
// release to: kcp upgrades one minor at a time, so to may not skip a minor above the lowest
// of from; and kcp has no downgrade to an earlier minor (what a newer minor wrote to etcd an
// older one may not read), so to may not be of a minor below the highest of from. A patch
// downgrade within the minor is allowed.
func CheckChange(from []kcpversion.Version, to kcpversion.Version) error {
	if len(from) == 0 || to.IsLatest() {
		return nil
	}
	lowest, highest := from[0], from[0]
	for _, v := range from[1:] {
		if !v.AtLeast(lowest) {
			lowest = v
		}
		if v.AtLeast(highest) {
			highest = v
		}
	}
	if to.Minor() > lowest.Minor()+1 {
		return fmt.Errorf("skips minor 0.%d: the setup runs or is to run %s, and kcp upgrades one minor at a time; move to the newest release of 0.%d first",
			lowest.Minor()+1, lowest, lowest.Minor()+1)
	}
	if to.Minor() < highest.Minor() {
		return fmt.Errorf("is a downgrade across a minor: the setup runs or is to run %s, and kcp cannot go back to an earlier minor (a patch downgrade within 0.%d is allowed)",
			highest, highest.Minor())
	}
	return nil
}

// CheckPinned holds the tag a member pins against release, its setup's: more than one minor
// apart is refused (the roll would run them side by side, which kcp does not support);
// any other difference is a warning, since the member does not follow the setup.
func CheckPinned(release kcpversion.Version, pinned string) (warning string, err error) {
	v := kcpversion.FromTag(pinned)
	switch {
	case v.IsLatest():
		return fmt.Sprintf("pins image tag %q, which is no release: it does not follow the setup's %s", pinned, release), nil
	case v.Equal(release):
		return "", nil
	case absMinorDiff(v, release) > 1:
		return "", fmt.Errorf("pins %s, more than one minor from the setup's %s: kcp runs its components at most one minor apart", v, release)
	}
	return fmt.Sprintf("pins %s and does not follow the setup's %s: remove spec.image.tag to follow it", v, release), nil
}

func absMinorDiff(a, b kcpversion.Version) int {
	d := a.Minor() - b.Minor()
	if d < 0 {
		return -d
	}
	return d
}

// CheckCacheServerEtcd refuses release for a CacheServer with an external etcd that follows
// the setup: its cache server takes the --etcd-* flags from kcpversion.CacheServerEtcd on.
func CheckCacheServerEtcd(release kcpversion.Version) error {
	if release.CacheServerEtcd() {
		return nil
	}
	return fmt.Errorf("the cache server of kcp %s has only its embedded etcd, and the CacheServer has spec.etcd: an external etcd needs kcp %s or newer",
		release, kcpversion.CacheServerEtcd)
}
