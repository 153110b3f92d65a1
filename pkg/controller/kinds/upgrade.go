package kinds

import (
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	appsv1listers "k8s.io/client-go/listers/apps/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
	"github.com/kcp-setups/apiserver/pkg/resources/virtualworkspace"
	"github.com/kcp-setups/apiserver/pkg/upgrade"
)

// Release is a kind's part in the roll of its setup, the RootShard whose spec.version it
// follows (docs/kcp-versions.md, "Upgrading a setup"): a value per kind, of closures written
// for its type, as the Kind descriptors are.
type Release[T controller.Object] struct {
	Group operatorv1alpha1.UpgradeGroup
	// Image points at the object's spec.image, which a member's release goes to.
	Image func(T) **operatorv1alpha1.ImageSpec
	// Inherited, when set, is the image an object runs when it names none (a
	// VirtualWorkspace runs its target's): a copy given a release starts from it.
	Inherited func(x controller.Indexes, obj T) *operatorv1alpha1.ImageSpec
	// Follower, when set, is another image of the object that runs its release unless it
	// names a tag of its own (the RootShard's internal proxy, spec.proxy.image); nil for none.
	Follower func(T) *operatorv1alpha1.ImageSpec
	// Setup is the name of the RootShard whose roll the object follows, "" for none.
	Setup func(x controller.Indexes, obj T) string
	// Deployments are the names of the object's Deployments that run its release: the
	// first's kcp container tells what it runs; the roll waits for each.
	Deployments func(T) []string
}

// The releases of the members of a setup, by group (upgrade.Order).
var (
	RootShardRelease = Release[*operatorv1alpha1.RootShard]{
		Group: operatorv1alpha1.UpgradeGroupRootShard,
		Image: func(o *operatorv1alpha1.RootShard) **operatorv1alpha1.ImageSpec { return &o.Spec.Image },
		Follower: func(o *operatorv1alpha1.RootShard) *operatorv1alpha1.ImageSpec {
			if o.Spec.Proxy == nil {
				return nil
			}
			return o.Spec.Proxy.Image
		},
		Setup: func(_ controller.Indexes, o *operatorv1alpha1.RootShard) string {
			if o.Spec.Version == "" {
				return ""
			}
			return o.Name
		},
		// The internal proxy rolls with the root shard unless it pins a tag.
		Deployments: func(o *operatorv1alpha1.RootShard) []string {
			names := []string{rootshard.ServiceName(o)}
			if p := o.Spec.Proxy; p == nil || p.Image == nil || p.Image.Tag == "" {
				names = append(names, frontproxy.RootShardProxy{RootShard: o}.DeploymentName())
			}
			return names
		},
	}
	ShardRelease = Release[*operatorv1alpha1.Shard]{
		Group: operatorv1alpha1.UpgradeGroupShard,
		Image: func(o *operatorv1alpha1.Shard) **operatorv1alpha1.ImageSpec { return &o.Spec.Image },
		// A local Shard alone: a joined or linked one belongs to another setup's cluster.
		Setup:       func(_ controller.Indexes, o *operatorv1alpha1.Shard) string { return controller.ShardRootShard(o) },
		Deployments: func(o *operatorv1alpha1.Shard) []string { return []string{shard.ServiceName(o)} },
	}
	FrontProxyRelease = Release[*operatorv1alpha1.FrontProxy]{
		Group: operatorv1alpha1.UpgradeGroupFrontProxy,
		Image: func(o *operatorv1alpha1.FrontProxy) **operatorv1alpha1.ImageSpec { return &o.Spec.Image },
		Setup: func(_ controller.Indexes, o *operatorv1alpha1.FrontProxy) string {
			return refName(o.Spec.RootShard.Reference)
		},
		Deployments: func(o *operatorv1alpha1.FrontProxy) []string {
			return []string{frontproxy.FrontProxy{FrontProxy: o}.DeploymentName()}
		},
	}
	CacheServerRelease = Release[*operatorv1alpha1.CacheServer]{
		Group: operatorv1alpha1.UpgradeGroupCacheServer,
		Image: func(o *operatorv1alpha1.CacheServer) **operatorv1alpha1.ImageSpec { return &o.Spec.Image },
		Setup: func(x controller.Indexes, o *operatorv1alpha1.CacheServer) string {
			all, err := RootShard.Lister(x, o.Namespace).List(labels.Everything())
			if err != nil {
				return ""
			}
			return CacheServerSetup(all, o.Name)
		},
		Deployments: func(o *operatorv1alpha1.CacheServer) []string {
			return []string{cacheserver.CacheServer{CacheServer: o}.DeploymentName()}
		},
	}
	VirtualWorkspaceRelease = Release[*operatorv1alpha1.VirtualWorkspace]{
		Group: operatorv1alpha1.UpgradeGroupVirtualWorkspace,
		Image: func(o *operatorv1alpha1.VirtualWorkspace) **operatorv1alpha1.ImageSpec { return &o.Spec.Image },
		Inherited: func(x controller.Indexes, o *operatorv1alpha1.VirtualWorkspace) *operatorv1alpha1.ImageSpec {
			switch t := o.Spec.Target; {
			case t.RootShardRef != nil:
				if rs, err := RootShard.Lister(x, o.Namespace).Get(t.RootShardRef.Name); err == nil {
					return rs.Spec.Image
				}
			case t.ShardRef != nil:
				if s, err := Shard.Lister(x, o.Namespace).Get(t.ShardRef.Name); err == nil {
					return s.Spec.Image
				}
			}
			return nil
		},
		Setup: VirtualWorkspaceSetup,
		Deployments: func(o *operatorv1alpha1.VirtualWorkspace) []string {
			return []string{virtualworkspace.VirtualWorkspace{VirtualWorkspace: o}.DeploymentName()}
		},
	}
)

// CacheServerSetup is the RootShard whose roll the CacheServer name follows: the one
// versioned RootShard whose spec.cache.ref names it; "" when none or several do (a
// CacheServer shared by several versioned setups follows none).
func CacheServerSetup(rootShards []*operatorv1alpha1.RootShard, name string) string {
	found := ""
	for _, rs := range rootShards {
		if rs.Spec.Version == "" || rs.Spec.Cache == nil || refName(rs.Spec.Cache.Reference) != name {
			continue
		}
		if found != "" {
			return ""
		}
		found = rs.Name
	}
	return found
}

// VirtualWorkspaceSetup is the RootShard whose roll a kcp VirtualWorkspace follows: its
// target, or its target Shard's RootShard; "" for a third-party server (spec.command), which
// runs its own image.
func VirtualWorkspaceSetup(x controller.Indexes, o *operatorv1alpha1.VirtualWorkspace) string {
	if len(o.Spec.Command) > 0 {
		return ""
	}
	switch t := o.Spec.Target; {
	case t.RootShardRef != nil:
		return t.RootShardRef.Name
	case t.ShardRef != nil:
		if s, err := Shard.Lister(x, o.Namespace).Get(t.ShardRef.Name); err == nil {
			return controller.ShardRootShard(s)
		}
	}
	return ""
}

// SetupOf is the RootShard with a spec.version whose roll obj follows; nil when none.
func (r Release[T]) SetupOf(x controller.Indexes, obj T) *operatorv1alpha1.RootShard {
	name := r.Setup(x, obj)
	if name == "" {
		return nil
	}
	rs, err := RootShard.Lister(x, obj.GetNamespace()).Get(name)
	if err != nil || rs.Spec.Version == "" {
		return nil
	}
	return rs
}

// Member is obj as upgrade.Tag sees it: its group, pinned tag and what its Deployment runs.
func (r Release[T]) Member(deployments appsv1listers.DeploymentLister, obj T) upgrade.Member {
	m := upgrade.Member{Group: r.Group, Kind: string(r.Group), Name: obj.GetName()}
	if img := *r.Image(obj); img != nil {
		m.Pinned = img.Tag
	}
	m.Running = RunningTag(deployments, obj.GetNamespace(), r.Deployments(obj)[0])
	return m
}

// Built is obj as its builders get it: obj itself outside a versioned setup, or when its
// release is what it names already; else a copy whose spec.image.tag (and its followers')
// is the release upgrade.Tag gives it.
func (r Release[T]) Built(x controller.Indexes, deployments appsv1listers.DeploymentLister, obj T) T {
	rs := r.SetupOf(x, obj)
	if rs == nil {
		return obj
	}
	m := r.Member(deployments, obj)
	tag := upgrade.Tag(rs, m)
	if tag == "" || tag == m.Pinned {
		return obj
	}
	out := obj.DeepCopyObject().(T)
	img := r.Image(out)
	if *img == nil {
		*img = &operatorv1alpha1.ImageSpec{}
		if r.Inherited != nil {
			if inherited := r.Inherited(x, obj); inherited != nil {
				*img = inherited.DeepCopy()
			}
		}
	}
	(*img).Tag = tag
	if r.Follower != nil {
		if f := r.Follower(out); f != nil && f.Tag == "" {
			f.Tag = tag
		}
	}
	return out
}

// RunningTag is the image tag of the first (kcp) container of the Deployment name of
// namespace in the host's cache; "" without the Deployment or a tag.
func RunningTag(deployments appsv1listers.DeploymentLister, namespace, name string) string {
	d, err := deployments.Deployments(namespace).Get(name)
	if err != nil || len(d.Spec.Template.Spec.Containers) == 0 {
		return ""
	}
	return ImageTag(d.Spec.Template.Spec.Containers[0].Image)
}

// ImageTag is the tag of an image reference ("" for none, or a digest).
func ImageTag(image string) string {
	if strings.Contains(image, "@") {
		return ""
	}
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return ""
	}
	return image[i+1:]
}
