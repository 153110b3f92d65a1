package upgrade

import (
	"testing"

	"github.com/stretchr/testify/assert"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

func TestTag(t *testing.T) {
	rolling := &operatorv1alpha1.SetupVersion{Current: "v0.31.6", Target: "v0.32.3", Group: operatorv1alpha1.UpgradeGroupShard,
		Components: []operatorv1alpha1.ComponentVersion{{Kind: "Shard", Name: "a", Desired: "v0.32.3"}}}
	setup := func(version string, status *operatorv1alpha1.SetupVersion) *operatorv1alpha1.RootShard {
		rs := &operatorv1alpha1.RootShard{}
		rs.Spec.Version, rs.Status.Version = version, status
		return rs
	}
	shard := func(name, pinned, running string) Member {
		return Member{Group: operatorv1alpha1.UpgradeGroupShard, Kind: "Shard", Name: name, Pinned: pinned, Running: running}
	}
	proxy := Member{Group: operatorv1alpha1.UpgradeGroupFrontProxy, Kind: "FrontProxy", Name: "fp"}
	cache := Member{Group: operatorv1alpha1.UpgradeGroupCacheServer, Kind: "CacheServer", Name: "c"}
	for name, tc := range map[string]struct {
		rs   *operatorv1alpha1.RootShard
		m    Member
		want string
	}{
		"pinned keeps its tag":                      {setup("v0.32.3", rolling), shard("a", "v0.31.4", ""), "v0.31.4"},
		"no setup: the default":                     {nil, shard("a", "", "v0.31.6"), ""},
		"no version: the default":                   {setup("", nil), shard("a", "", "v0.31.6"), ""},
		"recorded: desired":                         {setup("v0.32.3", rolling), shard("a", "", "v0.31.6"), "v0.32.3"},
		"not recorded, running: keeps it":           {setup("v0.32.3", rolling), shard("b", "", "v0.31.6"), "v0.31.6"},
		"new, group reached: target":                {setup("v0.32.3", rolling), shard("b", "", ""), "v0.32.3"},
		"new, group before the rolling one: target": {setup("v0.32.3", rolling), cache, "v0.32.3"},
		"new, group not reached: current":           {setup("v0.32.3", rolling), proxy, "v0.31.6"},
		"new, no roll: target":                      {setup("v0.32.3", &operatorv1alpha1.SetupVersion{Current: "v0.32.3", Target: "v0.32.3"}), proxy, "v0.32.3"},
		"no status yet, running: keeps it":          {setup("v0.32.3", nil), shard("a", "", "v0.31.6"), "v0.31.6"},
		"no status yet, new: spec.version":          {setup("v0.32.3", nil), shard("a", "", ""), "v0.32.3"},
	} {
		t.Run(name, func(t *testing.T) { assert.Equal(t, tc.want, Tag(tc.rs, tc.m)) })
	}
}

func TestOrderIsEveryGroupOnce(t *testing.T) {
	seen := map[operatorv1alpha1.UpgradeGroup]bool{}
	for i, g := range Order {
		assert.False(t, seen[g], "group %s twice", g)
		seen[g] = true
		assert.Equal(t, i, Index(g))
	}
	assert.Equal(t, -1, Index("Kubeconfig"))
	assert.Equal(t, []operatorv1alpha1.UpgradeGroup{"CacheServer", "RootShard", "Shard", "VirtualWorkspace", "FrontProxy"}, Order)
}
