package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/labels"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// Bootstrap is the namespace bootstrap PKI as the controllers see its users: every RootShard
// and CacheServer of the namespace without spec.certificates (BootstrapIndex).
type Bootstrap struct {
	Host    *hostcluster.Host
	Indexes Indexes
}

// Release deletes the namespace's bootstrap PKI, Secrets included, unless a live user other
// than the object name of kind still uses it. A user that appears meanwhile applies it again.
func (b Bootstrap) Release(ctx context.Context, namespace, kind, name string) error {
	if b.inUse(namespace, kind, name) {
		return nil
	}
	return b.Host.DeleteOwned(ctx, namespace, labels.SelectorFromSet(certificates.BootstrapLabels()).String())
}

// inUse reports whether a live user of the namespace's bootstrap PKI other than kind/name
// exists. When the caches cannot tell, it is in use.
func (b Bootstrap) inUse(namespace, kind, name string) bool {
	other := func(k, n string) bool { return k != kind || n != name }
	rootShards, err := IndexedOrError[*operatorv1alpha1.RootShard](b.Indexes.RootShards, BootstrapIndex, namespace)
	if err != nil {
		return true
	}
	for _, rs := range rootShards {
		if rs.DeletionTimestamp == nil && rs.Spec.Certificates == nil && other(kcp.RootShardKind, rs.Name) {
			return true
		}
	}
	cacheServers, err := IndexedOrError[*operatorv1alpha1.CacheServer](b.Indexes.CacheServers, BootstrapIndex, namespace)
	if err != nil {
		return true
	}
	for _, cs := range cacheServers {
		if cs.DeletionTimestamp == nil && cs.Spec.Certificates == nil && other(cacheserver.Kind, cs.Name) {
			return true
		}
	}
	return false
}

// releaseBootstrap is the Cleanup of every kind: an object that uses its namespace's bootstrap
// PKI (BootstrapIndex: a RootShard or a CacheServer without spec.certificates) takes it along
// when it is the last user.
func (b *Base[T, S]) releaseBootstrap(ctx context.Context, obj T) error {
	if users, _ := bootstrapUserOf(obj); len(users) == 0 {
		return nil
	}
	return Bootstrap{Host: b.Host, Indexes: b.Indexes}.Release(ctx, obj.GetNamespace(), b.Name, obj.GetName())
}
