package controller

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// The indexes of our kinds' informers that answer "which objects of a namespace refer to X"
// without listing the namespace, so that the cost of one event does not grow with the number
// of setups. Their values are "namespace/name", or "namespace/kind/name" for a target.
const (
	// RootShardIndex indexes Shards and FrontProxies by the RootShard spec.rootShard.reference
	// names.
	RootShardIndex = "operator.kcp.io/root-shard"
	// VirtualWorkspaceIndex indexes RootShards and Shards by the VirtualWorkspace
	// spec.kcpVirtualWorkspace names.
	VirtualWorkspaceIndex = "operator.kcp.io/virtual-workspace"
	// ReferenceSecretIndex indexes RootShards, Shards and FrontProxies by the copies of
	// reference Secrets their secretRefs name.
	ReferenceSecretIndex = "operator.kcp.io/reference-secret"
	// UsersSecretIndex indexes RootShards, Shards, FrontProxies, CacheServers and
	// VirtualWorkspaces by the Secrets their pods mount or their bundles are made of. A
	// Shard's holds those its own spec names; those of its RootShard are the RootShard's.
	UsersSecretIndex = "operator.kcp.io/users-secret"
	// TargetIndex indexes Kubeconfigs and VirtualWorkspaces by their target, "namespace/kind/name"
	// with the kind as TargetValue spells it.
	TargetIndex = "operator.kcp.io/target"
	// BootstrapIndex indexes the RootShards and CacheServers without spec.certificates, the
	// users of their namespace's bootstrap PKI, by namespace.
	BootstrapIndex = "operator.kcp.io/bootstrap"
)

// IndexValue is the value an index holds for the object name of namespace.
func IndexValue(namespace, name string) string { return namespace + "/" + name }

// TargetValue is the value TargetIndex holds for a target kind/name of namespace.
func TargetValue(namespace, kind, name string) string { return namespace + "/" + kind + "/" + name }

// Indexes are the caches of our kinds, with the Indexers. A nil cache is an empty one.
type Indexes struct {
	RootShards, Shards, FrontProxies, CacheServers, Kubeconfigs, VirtualWorkspaces cache.Indexer
}

// AddIndexes registers the Indexers on our kinds' shared informers, those not registered yet,
// and returns their caches. Every controller calls it from New, before the informers start:
// the first registers them, the others find them.
func (i Informers) AddIndexes() (Indexes, error) {
	var x Indexes
	for _, w := range ours {
		informer := w.informer(i.Ours.Operator().V1alpha1())
		have := informer.GetIndexer().GetIndexers()
		missing := cache.Indexers{}
		for name, f := range Indexers {
			if _, ok := have[name]; !ok {
				missing[name] = f
			}
		}
		if len(missing) > 0 {
			if err := informer.AddIndexers(missing); err != nil {
				return Indexes{}, fmt.Errorf("adding the indexes of our kinds: %w", err)
			}
		}
		*w.cache(&x) = informer.GetIndexer()
	}
	return x, nil
}

// Keys are the keys of the objects of a cache whose index holds value; none when the index
// cannot answer.
func Keys(objects cache.Indexer, index, value string) []string {
	if objects == nil {
		return nil
	}
	keys, err := objects.IndexKeys(index, value)
	if err != nil || len(keys) == 0 {
		return nil
	}
	return keys
}

// InNamespace are the keys of every object of a cache in namespace.
func InNamespace(objects cache.Indexer, namespace string) []string {
	return Keys(objects, cache.NamespaceIndex, namespace)
}

// Indexed are the objects of type T of a cache whose index holds value; none when the index
// cannot answer.
func Indexed[T any](objects cache.Indexer, index, value string) []T {
	out, _ := IndexedOrError[T](objects, index, value)
	return out
}

// IndexedOrError are the objects of type T of a cache whose index holds value, or why the
// index cannot answer.
func IndexedOrError[T any](objects cache.Indexer, index, value string) ([]T, error) {
	if objects == nil {
		return nil, nil
	}
	items, err := objects.ByIndex(index, value)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(items))
	for _, item := range items {
		if o, ok := item.(T); ok {
			out = append(out, o)
		}
	}
	return out, nil
}

// Matching are the keys of the objects among candidates that match, each once: an index
// narrows a namespace to candidates, the predicate that the index approximates decides.
func Matching[T metav1.Object](candidates []T, match func(T) bool) []string {
	keys := sets.New[string]()
	for _, o := range candidates {
		if match(o) {
			keys.Insert(IndexValue(o.GetNamespace(), o.GetName()))
		}
	}
	return sets.List(keys)
}

// ShardsOf are the Shards of the RootShard rootShard of namespace.
func (x Indexes) ShardsOf(namespace, rootShard string) []*operatorv1alpha1.Shard {
	return Indexed[*operatorv1alpha1.Shard](x.Shards, RootShardIndex, IndexValue(namespace, rootShard))
}

// ShardKeysOf are the keys of the Shards of the RootShard rootShard of namespace.
func (x Indexes) ShardKeysOf(namespace, rootShard string) []string {
	return Keys(x.Shards, RootShardIndex, IndexValue(namespace, rootShard))
}

// FrontProxiesOf are the FrontProxies of the RootShard rootShard of namespace.
func (x Indexes) FrontProxiesOf(namespace, rootShard string) []*operatorv1alpha1.FrontProxy {
	return Indexed[*operatorv1alpha1.FrontProxy](x.FrontProxies, RootShardIndex, IndexValue(namespace, rootShard))
}

// VirtualWorkspacesOf are the VirtualWorkspaces whose PKI is the RootShard rootShard's of
// namespace: those that serve it, and those that serve one of its Shards, each once.
func (x Indexes) VirtualWorkspacesOf(namespace, rootShard string) []*operatorv1alpha1.VirtualWorkspace {
	candidates := Indexed[*operatorv1alpha1.VirtualWorkspace](x.VirtualWorkspaces, TargetIndex, TargetValue(namespace, rootshard.Kind, rootShard))
	shards := sets.New[string]()
	for _, s := range x.ShardsOf(namespace, rootShard) {
		shards.Insert(s.Name)
		candidates = append(candidates, Indexed[*operatorv1alpha1.VirtualWorkspace](x.VirtualWorkspaces, TargetIndex, TargetValue(namespace, shard.Kind, s.Name))...)
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

// orEmpty is objects, or an empty cache for nil.
func orEmpty(objects cache.Indexer) cache.Indexer {
	if objects == nil {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	}
	return objects
}
