package kcpversion

import (
	"testing"

	"github.com/stretchr/testify/assert"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

func TestDefaultTagIsTheAPIDefault(t *testing.T) {
	assert.Equal(t, operatorv1alpha1.DefaultImageTag, DefaultTag)
}

func TestFromTag(t *testing.T) {
	for tag, want := range map[string]string{
		"":                     "v0.32.3",
		"v0.30.0":              "v0.30.0",
		"0.31.6":               "v0.31.6",
		"v0.32.3-rc.1":         "v0.32.3-rc.1",
		"main":                 "latest",
		"latest":               "latest",
		"e2b3c4d":              "latest",
		"sha256:0123456789abc": "latest",
		"v0.32":                "latest",
	} {
		assert.Equal(t, want, FromTag(tag).String(), "tag %q", tag)
	}
}

func TestGates(t *testing.T) {
	type gates struct{ clientCA, etcd, externalHostname, mountProxy bool }
	for tag, want := range map[string]gates{
		"v0.30.0":      {clientCA: false, etcd: false, externalHostname: true, mountProxy: false},
		"v0.30.1":      {clientCA: false, etcd: false, externalHostname: true, mountProxy: false},
		"v0.30.2":      {clientCA: true, etcd: false, externalHostname: true, mountProxy: false},
		"v0.30.3":      {clientCA: true, etcd: false, externalHostname: true, mountProxy: false},
		"v0.31.0":      {clientCA: true, etcd: true, externalHostname: false, mountProxy: false},
		"v0.31.4":      {clientCA: true, etcd: true, externalHostname: false, mountProxy: false},
		"v0.31.6":      {clientCA: true, etcd: true, externalHostname: false, mountProxy: true},
		"v0.31.7":      {clientCA: true, etcd: true, externalHostname: false, mountProxy: true},
		"v0.32.0":      {clientCA: true, etcd: true, externalHostname: false, mountProxy: false},
		"v0.32.2":      {clientCA: true, etcd: true, externalHostname: false, mountProxy: false},
		"v0.32.3-rc.1": {clientCA: true, etcd: true, externalHostname: false, mountProxy: false},
		"v0.32.3":      {clientCA: true, etcd: true, externalHostname: false, mountProxy: true},
		"v0.33.0":      {clientCA: true, etcd: true, externalHostname: false, mountProxy: true},
		"v1.0.0":       {clientCA: true, etcd: true, externalHostname: false, mountProxy: true},
		"main":         {clientCA: true, etcd: true, externalHostname: false, mountProxy: true},
	} {
		v := FromTag(tag)
		assert.Equal(t, want, gates{v.CacheServerClientCA(), v.CacheServerEtcd(), v.ExternalHostname(), v.MountProxy()}, tag)
	}
}

func TestAtLeast(t *testing.T) {
	assert.True(t, Latest.AtLeast(MustParse("v9.0.0")))
	assert.False(t, MustParse("v9.0.0").AtLeast(Latest))
	assert.True(t, MustParse("v0.31.0").AtLeast(MustParse("v0.31.0")))
	assert.False(t, MustParse("v0.30.9").AtLeast(MustParse("v0.31.0")))
}

func TestVirtualWorkspaceGates(t *testing.T) {
	type gates struct{ shardExternalURL, jsonLogs, externalAdmin bool }
	for tag, want := range map[string]gates{
		"v0.30.0":      {shardExternalURL: true, jsonLogs: false, externalAdmin: false},
		"v0.30.3":      {shardExternalURL: true, jsonLogs: false, externalAdmin: false},
		"v0.31.0-rc.1": {shardExternalURL: true, jsonLogs: false, externalAdmin: false},
		"v0.31.0":      {shardExternalURL: false, jsonLogs: true, externalAdmin: false},
		"v0.31.1":      {shardExternalURL: false, jsonLogs: true, externalAdmin: false},
		"v0.31.2":      {shardExternalURL: false, jsonLogs: true, externalAdmin: true},
		"v0.32.0":      {shardExternalURL: false, jsonLogs: true, externalAdmin: true},
		"v0.32.3":      {shardExternalURL: false, jsonLogs: true, externalAdmin: true},
		"main":         {shardExternalURL: false, jsonLogs: true, externalAdmin: true},
	} {
		v := FromTag(tag)
		assert.Equal(t, want, gates{v.VirtualWorkspacesShardExternalURL(), v.VirtualWorkspacesJSONLogs(), v.VirtualWorkspaceExternalAdmin()}, tag)
	}
}

func TestFrontProxyDropGroups(t *testing.T) {
	old := []string{"system:masters", "system:kcp:logical-cluster-admin"}
	all := append(old[:2:2], "system:kcp:initializer:*", "system:kcp:terminator:*")
	for tag, want := range map[string][]string{
		"v0.30.0": old, "v0.31.6": old, "v0.32.0-rc.1": old, "v0.32.0": all, "v0.32.3": all, "main": all,
	} {
		assert.Equal(t, want, FromTag(tag).FrontProxyDropGroups(), tag)
	}
}

func TestCacheServerEtcdPrefix(t *testing.T) {
	for _, tc := range []struct {
		release, prefix, want string
	}{
		{"v0.32.3", "", "/cache"},
		{"v0.32.3", "/kcp-cache", "/cache"},
		{"v0.31.6", "/a", "/cache"},
		{"main", "", "/cache"},
		{"main", "/registry", "/cache"},
		{"main", "/kcp-cache/", "/kcp-cache"},
		{"v0.33.0", "/team-a", "/team-a"},
	} {
		assert.Equal(t, tc.want, FromTag(tc.release).CacheServerEtcdPrefix(tc.prefix), "%s %q", tc.release, tc.prefix)
	}
}

func TestReleases(t *testing.T) {
	v, ok := Known("v0.31.6")
	assert.True(t, ok)
	assert.Equal(t, "v0.31.6", v.String())
	_, ok = Known("v0.31.5")
	assert.False(t, ok, "there is no v0.31.5")
	_, ok = Known("main")
	assert.False(t, ok)
	assert.Equal(t, "v0.31.6", NewestPatch(MustParse("v0.31.0")).String())
	assert.Equal(t, "v0.32.3", NewestPatch(MustParse("v0.32.3")).String())
	assert.Equal(t, 31, MustParse("v0.31.2").Minor())
	assert.True(t, MustParse("v0.31.2").Equal(FromTag("v0.31.2")))
	last := Releases[len(Releases)-1]
	assert.Equal(t, DefaultTag, last.String(), "the default is the newest release of the flag table")
}
