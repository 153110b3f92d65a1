package kinds

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
)

// TestBuiltGivesMembersTheirRelease: a member of a versioned setup is built, from a copy,
// with the release upgrade.Tag gives it; anything else is built as it is.
func TestBuiltGivesMembersTheirRelease(t *testing.T) {
	x := controller.Indexes{}
	for _, k := range All {
		x[k.KindName()] = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "team-a", Name: name} }
	ref := func(name string) *corev1.LocalObjectReference { return &corev1.LocalObjectReference{Name: name} }
	rootShard := func(name, version, cache string) *operatorv1alpha1.RootShard {
		rs := &operatorv1alpha1.RootShard{ObjectMeta: meta(name)}
		rs.Spec.Version = version
		if cache != "" {
			rs.Spec.Cache = &operatorv1alpha1.CacheConfig{Reference: ref(cache)}
		}
		return rs
	}
	root := rootShard("root", "v0.32.3", "cache")
	root.Spec.Image = &operatorv1alpha1.ImageSpec{Repository: "mirror/kcp", ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}}
	root.Spec.Proxy = &operatorv1alpha1.RootShardProxySpec{ComponentSpec: operatorv1alpha1.ComponentSpec{Image: &operatorv1alpha1.ImageSpec{Repository: "mirror/kcp"}}}
	for _, o := range []controller.Object{
		root, rootShard("plain", "", "shared"), rootShard("other", "v0.32.3", "shared"), rootShard("third", "v0.31.6", "shared"),
		&operatorv1alpha1.Shard{ObjectMeta: meta("s1"), Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: ref("root")}}},
	} {
		require.NoError(t, x[All.KindOf(o)].Add(o))
	}
	deployments := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	require.NoError(t, deployments.Add(&appsv1.Deployment{ObjectMeta: meta("running-shard-kcp"), Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kcp", Image: "ghcr.io/kcp-dev/kcp:v0.31.6"}}}}}}))
	lister := appsv1listers.NewDeploymentLister(deployments)

	shard := func(name, rootShard string) *operatorv1alpha1.Shard {
		return &operatorv1alpha1.Shard{ObjectMeta: meta(name), Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: ref(rootShard)}}}
	}
	tag := func(img *operatorv1alpha1.ImageSpec) string {
		if img == nil {
			return "<nil>"
		}
		return img.Tag
	}

	// The RootShard: its image keeps its repository and pull secrets; its proxy, which names
	// an image without a tag, follows.
	built := RootShardRelease.Built(x, lister, root)
	assert.Equal(t, &operatorv1alpha1.ImageSpec{Repository: "mirror/kcp", Tag: "v0.32.3", ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}}, built.Spec.Image)
	assert.Equal(t, "v0.32.3", built.Spec.Proxy.Image.Tag)
	assert.Empty(t, root.Spec.Image.Tag, "the cached object is not changed")
	assert.Equal(t, []string{"root-kcp", "root-proxy"}, RootShardRelease.Deployments(root))

	for name, tc := range map[string]struct {
		got, want string
	}{
		"a local Shard: the setup's release": {tag(ShardRelease.Built(x, lister, shard("new", "root")).Spec.Image), "v0.32.3"},
		"a Shard running a release keeps it until the roll records it": {
			tag(ShardRelease.Built(x, lister, shard("running", "root")).Spec.Image), "v0.31.6"},
		"a Shard of an unversioned RootShard: as it is": {tag(ShardRelease.Built(x, lister, shard("new", "plain")).Spec.Image), "<nil>"},
		"a joined Shard: as it is": {tag(ShardRelease.Built(x, lister, &operatorv1alpha1.Shard{ObjectMeta: meta("joined"),
			Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{SecretRef: ref("join")}}}).Spec.Image), "<nil>"},
		"a pinned Shard: its own tag": {tag(ShardRelease.Built(x, lister, &operatorv1alpha1.Shard{ObjectMeta: meta("pinned"),
			Spec: operatorv1alpha1.ShardSpec{CommonShardSpec: operatorv1alpha1.CommonShardSpec{ComponentSpec: operatorv1alpha1.ComponentSpec{
				Image: &operatorv1alpha1.ImageSpec{Tag: "v0.31.4"}}}, RootShard: operatorv1alpha1.RootShardConfig{Reference: ref("root")}}}).Spec.Image), "v0.31.4"},
		"the CacheServer one versioned RootShard names": {tag(CacheServerRelease.Built(x, lister, &operatorv1alpha1.CacheServer{ObjectMeta: meta("cache")}).Spec.Image), "v0.32.3"},
		"a CacheServer two versioned RootShards name: as it is": {
			tag(CacheServerRelease.Built(x, lister, &operatorv1alpha1.CacheServer{ObjectMeta: meta("shared")}).Spec.Image), "<nil>"},
		"a FrontProxy of the RootShard": {tag(FrontProxyRelease.Built(x, lister, &operatorv1alpha1.FrontProxy{ObjectMeta: meta("edge"),
			Spec: operatorv1alpha1.FrontProxySpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: ref("root")}}}).Spec.Image), "v0.32.3"},
		"a kcp VirtualWorkspace of a Shard of the RootShard": {tag(VirtualWorkspaceRelease.Built(x, lister, &operatorv1alpha1.VirtualWorkspace{ObjectMeta: meta("vw"),
			Spec: operatorv1alpha1.VirtualWorkspaceSpec{Target: operatorv1alpha1.VirtualWorkspaceTarget{ShardRef: ref("s1")}}}).Spec.Image), "v0.32.3"},
		"a third-party VirtualWorkspace: as it is": {tag(VirtualWorkspaceRelease.Built(x, lister, &operatorv1alpha1.VirtualWorkspace{ObjectMeta: meta("vw"),
			Spec: operatorv1alpha1.VirtualWorkspaceSpec{Command: []string{"/server"}, Target: operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: ref("root")}}}).Spec.Image), "<nil>"},
	} {
		t.Run(name, func(t *testing.T) { assert.Equal(t, tc.want, tc.got) })
	}

	// A VirtualWorkspace without an image starts from its target's.
	vw := VirtualWorkspaceRelease.Built(x, lister, &operatorv1alpha1.VirtualWorkspace{ObjectMeta: meta("vw"),
		Spec: operatorv1alpha1.VirtualWorkspaceSpec{Target: operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: ref("root")}}})
	assert.Equal(t, &operatorv1alpha1.ImageSpec{Repository: "mirror/kcp", Tag: "v0.32.3", ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}}, vw.Spec.Image)
}

func TestImageTag(t *testing.T) {
	for image, want := range map[string]string{
		"ghcr.io/kcp-dev/kcp:v0.32.3":           "v0.32.3",
		"registry:5000/kcp":                     "",
		"registry:5000/kcp:v0.31.6":             "v0.31.6",
		"ghcr.io/kcp-dev/kcp@sha256:0123456789": "",
		"kcp":                                   "",
	} {
		assert.Equal(t, want, ImageTag(image), image)
	}
}
