package kinds

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
	"github.com/kcp-setups/apiserver/pkg/resources/virtualworkspace"
)

// The indexes each kind contributes to its own cache (controller.Kind.Indexers), by the
// index names of package controller. Each function reads the object alone, since an index is
// updated when its object changes, never when another does.
var (
	rootShardIndexers = cache.Indexers{
		controller.VirtualWorkspaceIndex: index(func(o *operatorv1alpha1.RootShard) []string { return values(o, refName(o.Spec.KcpVirtualWorkspace)) }),
		controller.ReferenceSecretIndex:  index(rootShardReferenceSecrets),
		controller.UsersSecretIndex:      index(rootShardUsersSecrets),
		controller.BootstrapIndex:        index(func(o *operatorv1alpha1.RootShard) []string { return bootstrapUser(o, o.Spec.Certificates) }),
	}
	shardIndexers = cache.Indexers{
		controller.RootShardIndex:        index(func(o *operatorv1alpha1.Shard) []string { return values(o, controller.ShardRootShard(o)) }),
		controller.VirtualWorkspaceIndex: index(func(o *operatorv1alpha1.Shard) []string { return values(o, refName(o.Spec.KcpVirtualWorkspace)) }),
		controller.ReferenceSecretIndex:  index(func(o *operatorv1alpha1.Shard) []string { return values(o, ShardReferenceSecrets(o)...) }),
		controller.UsersSecretIndex:      index(shardUsersSecrets),
		controller.LinkIndex:             index(func(o *operatorv1alpha1.Shard) []string { return values(o, LinkBootstrap(o.Spec.RootShard.Link)) }),
	}
	frontProxyIndexers = cache.Indexers{
		controller.RootShardIndex:       index(func(o *operatorv1alpha1.FrontProxy) []string { return values(o, refName(o.Spec.RootShard.Reference)) }),
		controller.ReferenceSecretIndex: index(func(o *operatorv1alpha1.FrontProxy) []string { return values(o, refName(o.Spec.RootShard.SecretRef)) }),
		controller.LinkIndex:            index(func(o *operatorv1alpha1.FrontProxy) []string { return values(o, LinkBootstrap(o.Spec.RootShard.Link)) }),
		controller.VirtualWorkspaceIndex: index(func(o *operatorv1alpha1.FrontProxy) []string {
			var names []string
			for _, m := range o.Spec.AdditionalPathMappings {
				names = append(names, refName(m.VirtualWorkspaceRef))
			}
			return values(o, names...)
		}),
		controller.UsersSecretIndex: index(func(o *operatorv1alpha1.FrontProxy) []string {
			f := frontproxy.FrontProxy{FrontProxy: o}
			return values(o, append(f.UsersSecrets(), f.BundleSources()...)...)
		}),
	}
	cacheServerIndexers = cache.Indexers{
		controller.UsersSecretIndex: index(func(o *operatorv1alpha1.CacheServer) []string {
			return values(o, cacheserver.CacheServer{CacheServer: o}.UsersSecrets()...)
		}),
		controller.BootstrapIndex: index(func(o *operatorv1alpha1.CacheServer) []string { return bootstrapUser(o, o.Spec.Certificates) }),
	}
	kubeconfigIndexers = cache.Indexers{
		controller.TargetIndex: index(kubeconfigTarget),
		controller.LinkIndex: index(func(o *operatorv1alpha1.Kubeconfig) []string {
			return values(o, LinkBootstrap(o.Spec.Target.RootShardLink))
		}),
	}
	virtualWorkspaceIndexers = cache.Indexers{
		controller.UsersSecretIndex: index(func(o *operatorv1alpha1.VirtualWorkspace) []string {
			return values(o, virtualworkspace.VirtualWorkspace{VirtualWorkspace: o}.UsersSecrets()...)
		}),
		controller.TargetIndex: index(virtualWorkspaceTargets),
	}
	linkIndexers = cache.Indexers{
		controller.RootShardIndex: index(func(o *operatorv1alpha1.Link) []string { return values(o, o.Spec.RootShardRef.Name) }),
	}
)

// index is an index function of the objects of type T; it indexes nothing of another type.
func index[T any](f func(T) []string) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		if o, ok := obj.(T); ok {
			return f(o), nil
		}
		return nil, nil
	}
}

// values are the index values of the names of m's namespace, the empty ones left out.
func values(m metav1.Object, names ...string) []string {
	var out []string
	for _, n := range names {
		if n != "" {
			out = append(out, controller.IndexValue(m.GetNamespace(), n))
		}
	}
	return out
}

// LinkBootstrap is the bootstrap Secret a link names; "" for none.
func LinkBootstrap(link *operatorv1alpha1.RootShardLink) string {
	if link == nil {
		return ""
	}
	return link.SecretRef.Name
}

func refName(ref *corev1.LocalObjectReference) string {
	if ref == nil {
		return ""
	}
	return ref.Name
}

func rootShardReferenceSecrets(o *operatorv1alpha1.RootShard) []string {
	if o.Spec.Cache == nil {
		return nil
	}
	return values(o, refName(o.Spec.Cache.SecretRef))
}

// ShardReferenceSecrets are the copies of reference Secrets a Shard names: a shard-join and a
// cache-client Secret.
func ShardReferenceSecrets(s *operatorv1alpha1.Shard) []string {
	var names []string
	if r := s.Spec.RootShard.SecretRef; r != nil {
		names = append(names, r.Name)
	}
	if c := s.Spec.Cache; c != nil && c.SecretRef != nil {
		names = append(names, c.SecretRef.Name)
	}
	return names
}

// rootShardUsersSecrets are the Secrets a RootShard's pods mount, and those its bundles are
// made of.
func rootShardUsersSecrets(o *operatorv1alpha1.RootShard) []string {
	return values(o, append(rootshard.Server(o).MountedSecrets(), controller.BundleSources(o.Spec.CABundleSecretRef, o.Spec.ClientCABundleRef)...)...)
}

// shardUsersSecrets are those a Shard mounts by its own spec: those it mounts by its
// RootShard's (its root CA, say) are the RootShard's too. A joined Shard's RootShard is made
// of names alone, as its pods' mounts are.
func shardUsersSecrets(o *operatorv1alpha1.Shard) []string {
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: controller.ShardRootShard(o)}}
	if o.Spec.RootShard.SecretRef != nil || o.Spec.RootShard.Link != nil {
		rs = reference.JoinedRootShard(shard.Kind, o.Namespace, o.Name)
	}
	return values(o, append(shard.Server(o, rs).MountedSecrets(), controller.BundleSources(o.Spec.CABundleSecretRef, o.Spec.ClientCABundleRef)...)...)
}

// kubeconfigTarget is a Kubeconfig's target, as kubeconfig.TargetRef names it.
func kubeconfigTarget(o *operatorv1alpha1.Kubeconfig) []string {
	if kind, name := kubeconfig.TargetRef(o); kind != "" && name != "" {
		return []string{controller.TargetValue(o.Namespace, kind, name)}
	}
	return nil
}

// virtualWorkspaceTargets are the root shard and the shard a VirtualWorkspace's target names,
// as VirtualWorkspaceServes names them.
func virtualWorkspaceTargets(o *operatorv1alpha1.VirtualWorkspace) []string {
	var out []string
	if name := refName(o.Spec.Target.RootShardRef); name != "" {
		out = append(out, controller.TargetValue(o.Namespace, rootshard.Kind, name))
	}
	if name := refName(o.Spec.Target.ShardRef); name != "" {
		out = append(out, controller.TargetValue(o.Namespace, shard.Kind, name))
	}
	return out
}

// bootstrapUser is the namespace of an object without spec.certificates: a user of its
// namespace's bootstrap PKI.
func bootstrapUser(m metav1.Object, certificates *operatorv1alpha1.Certificates) []string {
	if certificates != nil {
		return nil
	}
	return []string{m.GetNamespace()}
}

// ShardsOf are the Shards of the RootShard rootShard of namespace.
func ShardsOf(x controller.Indexes, namespace, rootShard string) []*operatorv1alpha1.Shard {
	return Shard.Indexed(x, controller.RootShardIndex, controller.IndexValue(namespace, rootShard))
}

// ShardKeysOf are the keys of the Shards of the RootShard rootShard of namespace.
func ShardKeysOf(x controller.Indexes, namespace, rootShard string) []string {
	return controller.Keys(Shard.Cache(x), controller.RootShardIndex, controller.IndexValue(namespace, rootShard))
}

// FrontProxiesOf are the FrontProxies of the RootShard rootShard of namespace.
func FrontProxiesOf(x controller.Indexes, namespace, rootShard string) []*operatorv1alpha1.FrontProxy {
	return FrontProxy.Indexed(x, controller.RootShardIndex, controller.IndexValue(namespace, rootShard))
}

// LinksOf are the Links that name the RootShard rootShard of namespace.
func LinksOf(x controller.Indexes, namespace, rootShard string) []*operatorv1alpha1.Link {
	return Link.Indexed(x, controller.RootShardIndex, controller.IndexValue(namespace, rootShard))
}

// VirtualWorkspacesOf are the VirtualWorkspaces whose PKI is the RootShard rootShard's of
// namespace: those that serve it, and those that serve one of its Shards, each once.
func VirtualWorkspacesOf(x controller.Indexes, namespace, rootShard string) []*operatorv1alpha1.VirtualWorkspace {
	candidates := VirtualWorkspace.Indexed(x, controller.TargetIndex, controller.TargetValue(namespace, rootshard.Kind, rootShard))
	shards := sets.New[string]()
	for _, s := range ShardsOf(x, namespace, rootShard) {
		shards.Insert(s.Name)
		candidates = append(candidates, VirtualWorkspace.Indexed(x, controller.TargetIndex, controller.TargetValue(namespace, shard.Kind, s.Name))...)
	}
	seen := sets.New[string]()
	var out []*operatorv1alpha1.VirtualWorkspace
	for _, vw := range candidates {
		t := vw.Spec.Target
		ours := (t.RootShardRef != nil && t.RootShardRef.Name == rootShard) ||
			(t.RootShardRef == nil && t.ShardRef != nil && shards.Has(t.ShardRef.Name))
		if ours && !seen.Has(vw.Name) {
			seen.Insert(vw.Name)
			out = append(out, vw)
		}
	}
	return out
}
