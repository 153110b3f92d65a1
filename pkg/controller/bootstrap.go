package controller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Bootstrap is the namespace bootstrap PKI as the controllers see its users: every object
// of the namespace in the BootstrapIndex of its kind's cache, those without
// spec.certificates.
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
	return b.Host.DeleteOwned(ctx, namespace, labels.SelectorFromSet(pki.BootstrapLabels()).String())
}

// inUse reports whether a live user of the namespace's bootstrap PKI other than kind/name
// exists. When the caches cannot tell, it is in use.
func (b Bootstrap) inUse(namespace, kind, name string) bool {
	for k, objects := range b.Indexes {
		if objects == nil || objects.GetIndexers()[BootstrapIndex] == nil {
			continue
		}
		users, err := IndexedOrError[metav1.Object](objects, BootstrapIndex, namespace)
		if err != nil {
			return true
		}
		for _, u := range users {
			if u.GetDeletionTimestamp() == nil && (k != kind || u.GetName() != name) {
				return true
			}
		}
	}
	return false
}

// releaseBootstrap is the Cleanup of every kind: an object that uses its namespace's bootstrap
// PKI (its kind's BootstrapIndex holds it: a RootShard or a CacheServer without
// spec.certificates) takes it along when it is the last user.
func (b *Base[T, S]) releaseBootstrap(ctx context.Context, obj T) error {
	users := b.Indexers[BootstrapIndex]
	if users == nil {
		return nil
	}
	if in, _ := users(obj); len(in) == 0 {
		return nil
	}
	return Bootstrap{Host: b.Host, Indexes: b.Indexes}.Release(ctx, obj.GetNamespace(), b.Name, obj.GetName())
}
