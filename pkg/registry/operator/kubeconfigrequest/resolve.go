package kubeconfigrequest

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// Resolvers find targets in this server's own storage, in the request's namespace, and the
// RootShard a Shard or FrontProxy joins through a Secret in the host cluster's reference
// Secrets.
type Resolvers struct {
	Scheme                           *runtime.Scheme
	RootShards, Shards, FrontProxies rest.Getter
	References                       *ReferenceSource
}

// RootShard resolves a root shard.
func (r Resolvers) RootShard(ctx context.Context, _, name string) (credentials.Target, error) {
	rs, err := r.rootShard(ctx, name)
	if err != nil {
		return credentials.Target{}, err
	}
	return credentials.ForRootShard(rs), nil
}

// Shard resolves a shard and its root shard.
func (r Resolvers) Shard(ctx context.Context, _, name string) (credentials.Target, error) {
	s := &operatorv1alpha1.Shard{}
	if err := r.get(ctx, r.Shards, name, s); err != nil {
		return credentials.Target{}, err
	}
	rs, err := r.parent(ctx, "Shard", shard.Kind, reference.ShardJoin, &s.ObjectMeta, s.Spec.RootShard)
	if err != nil {
		return credentials.Target{}, err
	}
	return credentials.ForShard(s, rs), nil
}

// FrontProxy resolves a front proxy and its root shard.
func (r Resolvers) FrontProxy(ctx context.Context, _, name string) (credentials.Target, error) {
	fp := &operatorv1alpha1.FrontProxy{}
	if err := r.get(ctx, r.FrontProxies, name, fp); err != nil {
		return credentials.Target{}, err
	}
	rs, err := r.parent(ctx, "FrontProxy", frontproxy.Kind, reference.FrontProxyJoin, &fp.ObjectMeta, fp.Spec.RootShard)
	if err != nil {
		return credentials.Target{}, err
	}
	return credentials.ForFrontProxy(fp, rs), nil
}

// parent is the RootShard of a Shard or FrontProxy; until it exists there is nothing to
// sign with, which is a conflict with the object's state, not a missing object. An object
// that joins through a Secret (secretRef, a copy of the RootShard's join Secret of kind
// join) has the in-memory RootShard its controller realizes from that Secret: its CAs are
// the local copies the controller writes in the object's namespace, under the names of
// consumer (the object's kind in those names).
func (r Resolvers) parent(ctx context.Context, kind, consumer string, join reference.Reference, obj *metav1.ObjectMeta, ref operatorv1alpha1.RootShardConfig) (*operatorv1alpha1.RootShard, error) {
	name := obj.Name
	if ref.SecretRef != nil {
		return r.References.RootShard(kind, consumer, obj.Namespace, name, ref.SecretRef.Name, join)
	}
	if ref.Link != nil {
		// The front-proxy-client CA that signs the credentials stays in the RootShard's
		// cluster: a link carries no CA key (docs/links.md).
		return nil, apierrors.NewConflict(operator.Resource("rootshards"), "",
			fmt.Errorf("%s %q joins its RootShard over a link: mint its credentials with the RootShard's kubeconfig subresource, in the RootShard's cluster", kind, name))
	}
	if ref.Reference == nil {
		return nil, apierrors.NewConflict(operator.Resource("rootshards"), "", fmt.Errorf("%s %q names no RootShard", kind, name))
	}
	rs, err := r.rootShard(ctx, ref.Reference.Name)
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewConflict(operator.Resource("rootshards"), ref.Reference.Name,
			fmt.Errorf("the RootShard %q of %s %q does not exist", ref.Reference.Name, kind, name))
	}
	return rs, err
}

func (r Resolvers) rootShard(ctx context.Context, name string) (*operatorv1alpha1.RootShard, error) {
	rs := &operatorv1alpha1.RootShard{}
	return rs, r.get(ctx, r.RootShards, name, rs)
}

// get reads an object through the server's watch cache and converts it to v1alpha1, which
// the builders take. resourceVersion "0" lets the cache answer, as any version it holds will
// do: a mint reads the target as the CAs it signs with are read, from a cache fed by a watch
// (informers of the host's Secrets), so a change of a moment ago may not be seen yet, and
// no etcd read is made per request. What the cache does not hold yet, an object created a
// moment ago, is read from etcd: a NotFound is only ever etcd's. The builders only read the
// result, which shares memory with the cache.
func (r Resolvers) get(ctx context.Context, from rest.Getter, name string, into runtime.Object) error {
	obj, err := from.Get(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		obj, err = from.Get(ctx, name, &metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	return r.Scheme.Convert(obj, into, nil)
}
