package apiserver

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/warning"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// warnings records the warnings of a request.
type warnings []string

func (w *warnings) AddWarning(_, text string) { *w = append(*w, text) }

// holdRelease runs check on obj (old nil on create) among others, and returns the error and
// the warnings it gave.
func holdRelease(t *testing.T, check store.NeighbourCheck, obj, old runtime.Object, others ...runtime.Object) (error, []string) {
	t.Helper()
	var got warnings
	ctx := warning.WithWarningRecorder(context.Background(), &got)
	return check(ctx, neighboursOf(others...), obj, old), got
}

// assertRefused checks that err is a 422 whose message holds want, or that err is nil when
// want is empty.
func assertRefused(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		require.NoError(t, err)
		return
	}
	var status apierrors.APIStatus
	require.ErrorAs(t, err, &status)
	assert.EqualValues(t, http.StatusUnprocessableEntity, status.Status().Code)
	assert.Contains(t, err.Error(), want)
}

func versioned(version string, mutate ...func(*operator.RootShard)) *operator.RootShard {
	rs := rootShard("root")
	rs.Spec.Version = version
	for _, m := range mutate {
		m(rs)
	}
	return rs
}

func withStatus(current string, components ...operator.ComponentVersion) func(*operator.RootShard) {
	return func(rs *operator.RootShard) {
		rs.Status.Version = &operator.SetupVersion{Current: current, Target: rs.Spec.Version, Components: components}
	}
}

func withTag(tag string) func(*operator.RootShard) {
	return func(rs *operator.RootShard) { rs.Spec.Image = &operator.ImageSpec{Tag: tag} }
}

func withCache(name string) func(*operator.RootShard) {
	return func(rs *operator.RootShard) { rs.Spec.Cache = &operator.CacheConfig{Reference: ref(name)} }
}

func pinned[T interface {
	*operator.Shard | *operator.FrontProxy | *operator.CacheServer | *operator.VirtualWorkspace
}](o T, tag string) T {
	image := &operator.ImageSpec{Tag: tag}
	switch o := any(o).(type) {
	case *operator.Shard:
		o.Spec.Image = image
	case *operator.FrontProxy:
		o.Spec.Image = image
	case *operator.CacheServer:
		o.Spec.Image = image
	case *operator.VirtualWorkspace:
		o.Spec.Image = image
	}
	return o
}

func withEtcd(cs *operator.CacheServer) *operator.CacheServer {
	cs.Spec.Etcd = &operator.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}
	return cs
}

// TestSetupReleaseRefusals: a RootShard's new spec.version is refused with a 422 at
// spec.version (or at its own pinned tag) for a skipped minor, a downgrade across a minor,
// a CacheServer with an external etcd that cannot run it, and a member pinned more than one
// minor away; any other pinned member is a warning. Nothing is held when spec.version stays.
func TestSetupReleaseRefusals(t *testing.T) {
	thirdParty := pinned(virtualWorkspace("access", "root"), "v0.20.0")
	thirdParty.Spec.Command = []string{"/access-vw"}
	vwOfShard := pinned(virtualWorkspace("vw-b", ""), "v0.30.3")
	vwOfShard.Spec.Target.RootShardRef, vwOfShard.Spec.Target.ShardRef = nil, ref("b")
	otherNamespace := pinned(shardOf("far", "root"), "v0.30.3")
	otherNamespace.Namespace = "team-b"
	tests := []struct {
		name     string
		obj, old *operator.RootShard
		others   []runtime.Object
		refused  string
		warnings []string
	}{
		{name: "a new setup", obj: versioned("v0.32.3")},
		{name: "no version: nothing held", obj: versioned(""), old: versioned("", withTag("v0.30.0"))},
		{name: "the version removed at the default's minor", obj: versioned(""), old: versioned("v0.32.1", withStatus("v0.32.1"))},
		{
			name: "the version removed two minors below the default", obj: versioned(""), old: versioned("v0.30.3", withStatus("v0.30.3")),
			refused: `spec.version: Invalid value: "": removing it moves every member that pins no tag to the default v0.32.3 at once, which skips minor 0.31`,
		},
		{name: "the next minor", obj: versioned("v0.32.3"), old: versioned("v0.31.6", withStatus("v0.31.6"))},
		{name: "a patch down within the minor", obj: versioned("v0.32.1"), old: versioned("v0.32.3", withStatus("v0.32.3"))},
		{
			name: "a skipped minor", obj: versioned("v0.32.3"), old: versioned("v0.30.3"),
			refused: `spec.version: Invalid value: "v0.32.3": skips minor 0.31: the setup runs or is to run v0.30.3`,
		},
		{
			name: "a skipped minor from a member still on the old minor", obj: versioned("v0.32.3"),
			old:     versioned("v0.31.6", withStatus("v0.30.3", operator.ComponentVersion{Kind: "Shard", Name: "b", Desired: "v0.31.6", Running: "v0.30.3"})),
			refused: `skips minor 0.31`,
		},
		{
			name: "a pinned member's status does not count", obj: versioned("v0.32.3"),
			old: versioned("v0.31.6", withStatus("v0.31.6", operator.ComponentVersion{Kind: "Shard", Name: "b", Desired: "v0.30.3", Running: "v0.30.3", Pinned: true})),
		},
		{
			name: "a downgrade across a minor", obj: versioned("v0.31.6"), old: versioned("v0.32.3", withStatus("v0.32.3")),
			refused: `spec.version: Invalid value: "v0.31.6": is a downgrade across a minor: the setup runs or is to run v0.32.3`,
		},
		{
			name: "a first version below the default the RootShard runs", obj: versioned("v0.31.6"), old: versioned(""),
			refused: "is a downgrade across a minor: the setup runs or is to run v0.32.3",
		},
		{
			name: "a first version from the RootShard's own tag, which it keeps: a warning", obj: versioned("v0.31.6", withTag("v0.30.3")), old: versioned("", withTag("v0.30.3")),
			warnings: []string{"RootShard/root spec.image.tag: pins v0.30.3 and does not follow the setup's v0.31.6"},
		},
		{
			name: "the RootShard's own tag two minors away", obj: versioned("v0.32.3", withTag("v0.30.3")), old: versioned("", withTag("v0.30.3")),
			refused: `move to the newest release of 0.31 first, spec.image.tag: Invalid value: "v0.30.3": pins v0.30.3, more than one minor from the setup's v0.32.3`,
		},
		{
			name: "a CacheServer with an external etcd below v0.31.0", obj: versioned("v0.30.3", withCache("cache")),
			others:  []runtime.Object{withEtcd(cacheServer("cache"))},
			refused: `spec.version: Invalid value: "v0.30.3": CacheServer "cache" (spec.cache.ref) follows the setup: the cache server of kcp v0.30.3 has only its embedded etcd`,
		},
		{
			name: "a CacheServer with an external etcd that pins its tag", obj: versioned("v0.30.3", withCache("cache")),
			others:   []runtime.Object{pinned(withEtcd(cacheServer("cache")), "v0.31.0")},
			warnings: []string{"CacheServer/cache spec.image.tag: pins v0.31.0 and does not follow the setup's v0.30.3"},
		},
		{
			name: "a Shard pinned two minors away", obj: versioned("v0.32.3"), old: versioned("v0.31.6"),
			others:  []runtime.Object{shardOf("a", "root"), pinned(shardOf("b", "root"), "v0.30.3")},
			refused: `spec.version: Invalid value: "v0.32.3": Shard/b pins v0.30.3, more than one minor from the setup's v0.32.3: kcp runs its components at most one minor apart: change its spec.image.tag first`,
		},
		{
			name: "a kcp VirtualWorkspace of a Shard pinned two minors away", obj: versioned("v0.32.3"), old: versioned("v0.31.6"),
			others:  []runtime.Object{shardOf("b", "root"), vwOfShard},
			refused: `VirtualWorkspace/vw-b pins v0.30.3`,
		},
		{
			name: "members of other setups, and a third-party virtual workspace, keep their tags", obj: versioned("v0.32.3"), old: versioned("v0.31.6"),
			others: []runtime.Object{pinned(shardOf("x", "other"), "v0.30.3"), otherNamespace, thirdParty, pinned(joinedShard("j", "root-shard-join"), "v0.30.3")},
		},
		{
			name: "a FrontProxy pinned one minor away: a warning", obj: versioned("v0.32.3"), old: versioned("v0.31.6"),
			others:   []runtime.Object{pinned(frontProxy("edge", "root"), "v0.31.6")},
			warnings: []string{"FrontProxy/edge spec.image.tag: pins v0.31.6 and does not follow the setup's v0.32.3: remove spec.image.tag to follow it"},
		},
		{
			name: "an edit that keeps spec.version is not held", obj: versioned("v0.32.3", func(rs *operator.RootShard) { rs.Spec.ClusterDomain = "example.org" }),
			old:    versioned("v0.32.3"),
			others: []runtime.Object{pinned(shardOf("b", "root"), "v0.30.3")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var old runtime.Object
			if tc.old != nil {
				old = tc.old
			}
			err, warned := holdRelease(t, setupRelease(nil), tc.obj, old, tc.others...)
			assertRefused(t, err, tc.refused)
			assert.Equal(t, tc.warnings, prefixes(warned, tc.warnings))
		})
	}
}

// prefixes is each of got cut to the length of the warning wanted at its index, so that a
// test names the start of each warning.
func prefixes(got, want []string) []string {
	if len(got) != len(want) {
		return got
	}
	var cut []string
	for i, g := range got {
		cut = append(cut, g[:min(len(g), len(want[i]))])
	}
	return cut
}

// TestMemberReleaseRefusals: a member's spec.image.tag more than one minor from its versioned
// RootShard's spec.version is refused with a 422 at spec.image.tag, any other difference is a
// warning; a CacheServer with spec.etcd and no tag that a versioned RootShard below v0.31.0
// names is refused at spec.etcd.
func TestMemberReleaseRefusals(t *testing.T) {
	root := func(version string) *operator.RootShard { return versioned(version, withCache("cache")) }
	vwOfShard := func(tag string) *operator.VirtualWorkspace {
		vw := pinned(virtualWorkspace("vw-b", ""), tag)
		vw.Spec.Target.RootShardRef, vw.Spec.Target.ShardRef = nil, ref("b")
		return vw
	}
	otherRoot := versioned("v0.32.3", withCache("cache"))
	otherRoot.Name = "other"
	tests := []struct {
		name     string
		obj, old runtime.Object
		others   []runtime.Object
		refused  string
		warnings []string
	}{
		{
			name: "a Shard pinned two minors below", obj: pinned(shardOf("b", "root"), "v0.30.3"), others: []runtime.Object{root("v0.32.3")},
			refused: `spec.image.tag: Invalid value: "v0.30.3": RootShard "root" runs its setup at v0.32.3 (spec.version): this pins v0.30.3, more than one minor from the setup's v0.32.3`,
		},
		{
			name: "a Shard pinned another patch: a warning", obj: pinned(shardOf("b", "root"), "v0.32.1"), others: []runtime.Object{root("v0.32.3")},
			warnings: []string{`spec.image.tag: this Shard of RootShard "root" pins v0.32.1 and does not follow the setup's v0.32.3: remove spec.image.tag to follow it`},
		},
		{name: "a Shard following the setup", obj: shardOf("b", "root"), others: []runtime.Object{root("v0.32.3")}},
		{name: "a RootShard without a version", obj: pinned(shardOf("b", "root"), "v0.30.3"), others: []runtime.Object{root("")}},
		{name: "a Shard joined by a Secret", obj: pinned(joinedShard("b", "root-shard-join"), "v0.30.3"), others: []runtime.Object{root("v0.32.3")}},
		{
			name: "an edit that keeps the tag is not held", obj: pinned(shardOf("b", "root"), "v0.30.3"), old: pinned(shardOf("b", "root"), "v0.30.3"),
			others: []runtime.Object{root("v0.32.3")},
		},
		{
			name: "a FrontProxy pinned two minors above", obj: pinned(frontProxy("edge", "root"), "v0.32.3"), old: frontProxy("edge", "root"),
			others: []runtime.Object{root("v0.30.3")}, refused: `spec.image.tag: Invalid value: "v0.32.3"`,
		},
		{
			name: "a kcp VirtualWorkspace of a Shard of the setup", obj: vwOfShard("v0.30.3"),
			others: []runtime.Object{root("v0.32.3"), shardOf("b", "root")}, refused: `spec.image.tag: Invalid value: "v0.30.3": RootShard "root"`,
		},
		{
			name: "a third-party VirtualWorkspace runs its own image", obj: func() runtime.Object {
				vw := vwOfShard("v0.1.0")
				vw.Spec.Command = []string{"/access-vw"}
				return vw
			}(),
			others: []runtime.Object{root("v0.32.3"), shardOf("b", "root")},
		},
		{
			name: "a CacheServer with an external etcd and no tag, named by a setup below v0.31.0", obj: withEtcd(cacheServer("cache")), old: cacheServer("cache"),
			others:  []runtime.Object{root("v0.30.3")},
			refused: `spec.etcd: Forbidden: RootShard "root" names this CacheServer and runs its setup at v0.30.3 (spec.version): the cache server of kcp v0.30.3 has only its embedded etcd`,
		},
		{
			name: "a CacheServer with an external etcd, named by a setup at v0.31.0", obj: withEtcd(cacheServer("cache")),
			others: []runtime.Object{root("v0.31.0")},
		},
		{
			name: "a CacheServer with an external etcd that pins a tag one minor away", obj: pinned(withEtcd(cacheServer("cache")), "v0.31.0"),
			others:   []runtime.Object{root("v0.30.3")},
			warnings: []string{`spec.image.tag: this CacheServer of RootShard "root" pins v0.31.0`},
		},
		{
			name: "a CacheServer two versioned setups name follows neither", obj: pinned(cacheServer("cache"), "v0.30.3"),
			others: []runtime.Object{root("v0.32.3"), otherRoot},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err, warned := holdRelease(t, memberRelease, tc.obj, tc.old, tc.others...)
			assertRefused(t, err, tc.refused)
			assert.Equal(t, tc.warnings, prefixes(warned, tc.warnings))
		})
	}
}

// TestAReleaseOfAnotherRepositoryNeedsToRunIt: a new spec.version moves each following member
// whose image is of another repository than kcp's to a tag of that repository, which runs
// code of its choice: as a change of its own tag would, it needs create on Deployments (403
// naming spec.version and the member); a member of kcp's repository, or one that pins its
// tag, asks nothing, and neither does an edit that keeps spec.version. Turning autoUpdate
// Patch on asks it too: the server then moves spec.version with its own rights.
func TestAReleaseOfAnotherRepositoryNeedsToRunIt(t *testing.T) {
	custom := func(o *operator.Shard, tag string) *operator.Shard {
		o.Spec.Image = &operator.ImageSpec{Repository: "registry.example.com/kcp", Tag: tag}
		return o
	}
	autoUpdate := func(rs *operator.RootShard) {
		rs.Spec.Maintenance = &operator.Maintenance{AutoUpdate: operator.AutoUpdatePatch}
	}
	tests := []struct {
		name      string
		obj, old  *operator.RootShard
		others    []runtime.Object
		mayRun    bool
		forbidden string
	}{
		{
			name: "a Shard of another repository", obj: versioned("v0.32.3"), old: versioned("v0.31.6"),
			others:    []runtime.Object{custom(shardOf("b", "root"), "")},
			forbidden: `user "eve" may not set spec.version to v0.32.3 for Shard/b, whose image is of repository registry.example.com/kcp without create on deployments.apps in namespace "team-a"`,
		},
		{
			name: "the RootShard's own image of another repository", obj: versioned("v0.32.3", func(rs *operator.RootShard) {
				rs.Spec.Image = &operator.ImageSpec{Repository: "registry.example.com/kcp"}
			}),
			forbidden: "spec.version to v0.32.3 for RootShard/root, whose image is of repository registry.example.com/kcp",
		},
		{
			name: "allowed to run it", obj: versioned("v0.32.3"), old: versioned("v0.31.6"),
			others: []runtime.Object{custom(shardOf("b", "root"), "")}, mayRun: true,
		},
		{name: "kcp's own repository", obj: versioned("v0.32.3"), old: versioned("v0.31.6"), others: []runtime.Object{shardOf("b", "root")}},
		{
			name: "a pinned tag of another repository does not follow", obj: versioned("v0.32.3"), old: versioned("v0.31.6"),
			others: []runtime.Object{custom(shardOf("b", "root"), "v0.32.3")},
		},
		{
			name: "spec.version kept", obj: versioned("v0.32.3", withCache("cache")), old: versioned("v0.32.3"),
			others: []runtime.Object{custom(shardOf("b", "root"), "")},
		},
		{
			name: "autoUpdate Patch turned on: the server would move it later", obj: versioned("v0.32.1", autoUpdate), old: versioned("v0.32.1"),
			others:    []runtime.Object{custom(shardOf("b", "root"), "")},
			forbidden: `spec.maintenance.autoUpdate to Patch for Shard/b, whose image is of repository registry.example.com/kcp without create on deployments.apps`,
		},
		{
			name: "autoUpdate Patch kept", obj: versioned("v0.32.1", autoUpdate, withCache("cache")), old: versioned("v0.32.1", autoUpdate),
			others: []runtime.Object{custom(shardOf("b", "root"), "")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			authz := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
				asked = append(asked, a.GetVerb()+" "+a.GetResource()+"."+a.GetAPIGroup())
				if tc.mayRun {
					return authorizer.DecisionAllow, "", nil
				}
				return authorizer.DecisionNoOpinion, "", nil
			})
			ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "eve"})
			var old runtime.Object
			if tc.old != nil {
				old = tc.old
			}
			err := setupRelease(authz)(ctx, neighboursOf(tc.others...), tc.obj, old)
			if tc.forbidden == "" {
				require.NoError(t, err)
				if !tc.mayRun {
					assert.Empty(t, asked)
				}
				return
			}
			require.True(t, apierrors.IsForbidden(err), "a 403: %v", err)
			assert.Contains(t, err.Error(), tc.forbidden)
			assert.Equal(t, []string{"create deployments.apps"}, asked)
		})
	}
}
