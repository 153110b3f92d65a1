package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
)

// The indexes of our kinds' informers that answer "which objects of a namespace refer to X"
// without listing the namespace, so that the cost of one event does not grow with the number
// of setups. Their values are "namespace/name", or "namespace/kind/name" for a target. Each
// kind contributes the functions of those it is indexed by (Kind.Indexers, in package kinds).
const (
	// RootShardIndex indexes Shards and FrontProxies by the RootShard spec.rootShard.reference
	// names, and Links by the RootShard spec.rootShardRef names.
	RootShardIndex = "operator.kcp.io/root-shard"
	// VirtualWorkspaceIndex indexes RootShards and Shards by the VirtualWorkspace
	// spec.kcpVirtualWorkspace names, and FrontProxies by those their
	// spec.additionalPathMappings[].virtualWorkspaceRef name.
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
	// LinkIndex indexes Shards, FrontProxies and Kubeconfigs joined over a link by the
	// bootstrap Secret they name (spec.rootShard.link, spec.target.rootShardLink).
	LinkIndex = "operator.kcp.io/link"
)

// IndexValue is the value an index holds for the object name of namespace.
func IndexValue(namespace, name string) string { return namespace + "/" + name }

// TargetValue is the value TargetIndex holds for a target kind/name of namespace.
func TargetValue(namespace, kind, name string) string { return namespace + "/" + kind + "/" + name }

// Indexes are the caches of our kinds, with their indexes, by the kinds' names in owner
// labels (Registry.AddIndexes). A missing cache is an empty one.
type Indexes map[string]cache.Indexer

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

// orEmpty is objects, or an empty cache for nil.
func orEmpty(objects cache.Indexer) cache.Indexer {
	if objects == nil {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	}
	return objects
}
