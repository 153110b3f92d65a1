// Package kcpversion reads the kcp release a component runs from its image tag, and names
// the command-line features that differ between releases, so that the builders emit only
// the flags the image's kcp defines and validation refuses what it cannot run. It is pure:
// no I/O.
package kcpversion

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// DefaultTag is the image tag of a component whose spec names none. It must equal
// operatorv1alpha1.DefaultImageTag (a test checks); it lives here too because validation
// works on the internal types and may not import the versioned package.
const DefaultTag = "v0.32.3"

// Version is the kcp release of an image. The zero value is the latest release.
type Version struct {
	// v is nil for a tag that is no release (main, a commit, a digest): such an image is
	// built from kcp's main branch, so it is taken to have every feature, as kcp-operator
	// does.
	v *version.Version
}

// Latest is a Version newer than every release.
var Latest = Version{}

// FromTag is the kcp release of an image tag; an empty tag is DefaultTag, and a tag that is
// not a semantic version ("main", a commit, a digest) is Latest.
func FromTag(tag string) Version {
	if tag == "" {
		tag = DefaultTag
	}
	v, err := version.ParseSemantic(tag)
	if err != nil {
		return Latest
	}
	return Version{v: v}
}

// MustParse is the Version of a release such as "v0.31.6"; it panics on anything else, so
// it is for constants and tests.
func MustParse(release string) Version {
	return Version{v: version.MustParseSemantic(release)}
}

// IsLatest reports whether the tag named no release.
func (v Version) IsLatest() bool { return v.v == nil }

// String is the release with its leading v, or "latest".
func (v Version) String() string {
	if v.v == nil {
		return "latest"
	}
	return "v" + v.v.String()
}

// AtLeast reports whether v is release min or newer; Latest is newer than every release.
// A pre-release of min is older than min.
func (v Version) AtLeast(min Version) bool {
	switch {
	case v.v == nil:
		return true
	case min.v == nil:
		return false
	default:
		return v.v.AtLeast(min.v)
	}
}

// The first releases of the features that differ between the kcp releases kcp-setups runs
// (docs/kcp-versions.md, "What changes between v0.30.0 and v0.32.3").
var (
	// CacheServerClientCA is the first release whose cache server has --client-ca-file
	// (pkg/cache/server/options/authentication.go, new in v0.30.2).
	CacheServerClientCA = MustParse("v0.30.2")
	// CacheServerEtcd is the first release whose cache server has the --etcd-* flags of an
	// external etcd and --logging-format (pkg/cache/server/options/options.go@v0.31.0).
	CacheServerEtcd = MustParse("v0.31.0")
	// ExternalHostnameIgnored is the first release in which kcp start's --external-hostname
	// is a hidden no-op (pkg/server/options/options.go@v0.31.0): kcp derives the external
	// address from --shard-external-url instead.
	ExternalHostnameIgnored = MustParse("v0.31.0")
	// MountProxy031 and MountProxy032 are the first releases of their minors with the mount
	// proxy (--mount-proxy-client-cert-file, pkg/server/options/options.go@v0.32.3, and the
	// front proxy's requestheader CA on its serving side); v0.32.0 to v0.32.2 lack it.
	MountProxy031 = MustParse("v0.31.6")
	MountProxy032 = MustParse("v0.32.3")
	// VirtualWorkspacesShardExternalURLIgnored is the first release whose virtual-workspaces
	// command takes --shard-external-url as a hidden no-op; before it the flag is required
	// (cmd/virtual-workspaces/options/options.go@v0.30.0 Validate, @v0.31.0 MarkHidden).
	VirtualWorkspacesShardExternalURLIgnored = MustParse("v0.31.0")
	// VirtualWorkspacesJSONLogs is the first release whose virtual-workspaces command
	// registers the json logging format (cmd/virtual-workspaces/options/options.go@v0.31.0
	// imports pkg/logging/json/register); before it --logging-format=json fails validation.
	VirtualWorkspacesJSONLogs = MustParse("v0.31.0")
	// VirtualWorkspaceExternalAdmin is the first release whose virtual-workspaces command has
	// --external-logical-cluster-admin-kubeconfig (cmd/virtual-workspaces/options/options.go@v0.31.2).
	VirtualWorkspaceExternalAdmin = MustParse("v0.31.2")
	// FrontProxyDropsInitializerGroups is the first release whose kcp-front-proxy drops
	// system:kcp:initializer:* and system:kcp:terminator:* by default too
	// (pkg/proxy/options/authentication.go@v0.32.0 NewAuthentication).
	FrontProxyDropsInitializerGroups = MustParse("v0.32.0")
	// CacheServerEtcdPrefix is the first release whose cache server honours --etcd-prefix:
	// kcp's main branch after v0.32 (pkg/cache/server/config.go, "Let cache-server honour
	// --etcd-prefix"); up to v0.32.3 it always keeps its data under /cache
	// (pkg/cache/server/config.go@v0.32.3 sets StorageConfig.Prefix = "/cache"). No v0.33
	// release exists yet, so only an image of kcp's main branch (Latest) honours it here.
	CacheServerEtcdPrefix = MustParse("v0.33.0")
)

// CacheServerDefaultEtcdPrefix is where a cache server keeps its data in an external etcd
// unless it honours another --etcd-prefix.
const CacheServerDefaultEtcdPrefix = "/cache"

// CacheServerEtcdPrefix is the etcd prefix a cache server of release v keeps its data under
// when given prefix (empty: none): prefix from CacheServerEtcdPrefix on, unless it is empty or
// kube-apiserver's default /registry, else /cache.
func (v Version) CacheServerEtcdPrefix(prefix string) string {
	prefix = strings.TrimSuffix(prefix, "/")
	if !v.AtLeast(CacheServerEtcdPrefix) || prefix == "" || prefix == "/registry" {
		return CacheServerDefaultEtcdPrefix
	}
	return prefix
}

// Releases are the kcp releases the flag table was read at (pkg/resources/flagtable,
// docs/kcp-versions.md), oldest first: a setup's spec.version must name one of them. There
// is no v0.31.5.
var Releases = []Version{
	MustParse("v0.30.0"), MustParse("v0.30.1"), MustParse("v0.30.2"), MustParse("v0.30.3"),
	MustParse("v0.31.0"), MustParse("v0.31.1"), MustParse("v0.31.2"), MustParse("v0.31.3"),
	MustParse("v0.31.4"), MustParse("v0.31.6"),
	MustParse("v0.32.0"), MustParse("v0.32.1"), MustParse("v0.32.2"), MustParse("v0.32.3"),
}

// Minor is the release's minor version (32 for v0.32.3); -1 for Latest.
func (v Version) Minor() int {
	if v.v == nil {
		return -1
	}
	return int(v.v.Minor())
}

// Equal reports whether v and o are the same release.
func (v Version) Equal(o Version) bool {
	if v.v == nil || o.v == nil {
		return v.v == nil && o.v == nil
	}
	return v.v.EqualTo(o.v)
}

// Known is the release named by tag when it is one of Releases.
func Known(tag string) (Version, bool) {
	v, err := version.ParseSemantic(tag)
	if err != nil {
		return Version{}, false
	}
	for _, r := range Releases {
		if r.v.EqualTo(v) {
			return r, true
		}
	}
	return Version{}, false
}

// NewestPatch is the newest of Releases with v's major and minor, or v itself when none is
// newer.
func NewestPatch(v Version) Version {
	newest := v
	if v.v == nil {
		return v
	}
	for _, r := range Releases {
		if r.v.Major() == v.v.Major() && r.v.Minor() == v.v.Minor() && !newest.AtLeast(r) {
			newest = r
		}
	}
	return newest
}

// FrontProxyDefaultDropGroups are the groups every kcp-front-proxy release drops unless
// --authentication-drop-groups is given (pkg/proxy/options/authentication.go@v0.30.0): a
// client that claims them would be shard admin on every shard behind the proxy.
var FrontProxyDefaultDropGroups = []string{"system:masters", "system:kcp:logical-cluster-admin"}

// FrontProxyDropGroups are the groups kcp-front-proxy of release v drops by default, "prefix*"
// for a prefix, as the flag writes them. --authentication-drop-groups replaces them, so a
// front proxy given more groups to drop is given these too.
func (v Version) FrontProxyDropGroups() []string {
	groups := append([]string(nil), FrontProxyDefaultDropGroups...)
	if v.AtLeast(FrontProxyDropsInitializerGroups) {
		groups = append(groups, "system:kcp:initializer:*", "system:kcp:terminator:*")
	}
	return groups
}

// CacheServerClientCA reports whether the cache server takes --client-ca-file.
func (v Version) CacheServerClientCA() bool { return v.AtLeast(CacheServerClientCA) }

// CacheServerEtcd reports whether the cache server takes --etcd-* and --logging-format.
func (v Version) CacheServerEtcd() bool { return v.AtLeast(CacheServerEtcd) }

// ExternalHostname reports whether kcp start's --external-hostname still does something,
// so that it is worth emitting.
func (v Version) ExternalHostname() bool { return !v.AtLeast(ExternalHostnameIgnored) }

// MountProxy reports whether shards forward requests for mounted workspaces to the front
// proxy with a client certificate of their own (--mount-proxy-client-cert-file), and the
// front proxy verifies it: kcp-operator's constraint "~0.31.6 || >=0.32.3".
func (v Version) MountProxy() bool {
	if v.v == nil {
		return true
	}
	if v.v.Major() == 0 && v.v.Minor() == 31 {
		return v.AtLeast(MountProxy031)
	}
	return v.AtLeast(MountProxy032)
}

// VirtualWorkspacesShardExternalURL reports whether kcp's standalone virtual-workspaces
// server requires --shard-external-url, which it ignores from v0.31.0 on.
func (v Version) VirtualWorkspacesShardExternalURL() bool {
	return !v.AtLeast(VirtualWorkspacesShardExternalURLIgnored)
}

// VirtualWorkspacesJSONLogs reports whether kcp's standalone virtual-workspaces server
// accepts --logging-format=json.
func (v Version) VirtualWorkspacesJSONLogs() bool { return v.AtLeast(VirtualWorkspacesJSONLogs) }

// VirtualWorkspaceExternalAdmin reports whether kcp's standalone virtual-workspaces server
// takes --external-logical-cluster-admin-kubeconfig, the identity it checks access to
// workspaces of other shards with.
func (v Version) VirtualWorkspaceExternalAdmin() bool {
	return v.AtLeast(VirtualWorkspaceExternalAdmin)
}
