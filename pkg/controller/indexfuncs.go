package controller

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
	"github.com/kcp-setups/apiserver/pkg/resources/virtualworkspace"
)

// Indexers are the indexes of our kinds' caches (AddIndexes). Each function reads the object
// alone, since an index is updated when its object changes, never when another does; it
// indexes the kinds its index names and nothing of the others, so that every cache of our
// kinds can hold them all.
var Indexers = cache.Indexers{
	RootShardIndex:        rootShardOf,
	VirtualWorkspaceIndex: virtualWorkspaceOf,
	ReferenceSecretIndex:  referenceSecretsOf,
	UsersSecretIndex:      usersSecretsOf,
	TargetIndex:           targetsOf,
	BootstrapIndex:        bootstrapUserOf,
}

// values are the index values of the names of m's namespace, the empty ones left out.
func values(m metav1.Object, names ...string) []string {
	var out []string
	for _, n := range names {
		if n != "" {
			out = append(out, IndexValue(m.GetNamespace(), n))
		}
	}
	return out
}

func refName(ref *corev1.LocalObjectReference) string {
	if ref == nil {
		return ""
	}
	return ref.Name
}

func rootShardOf(obj any) ([]string, error) {
	switch o := obj.(type) {
	case *operatorv1alpha1.Shard:
		return values(o, ShardRootShard(o)), nil
	case *operatorv1alpha1.FrontProxy:
		return values(o, refName(o.Spec.RootShard.Reference)), nil
	}
	return nil, nil
}

func virtualWorkspaceOf(obj any) ([]string, error) {
	switch o := obj.(type) {
	case *operatorv1alpha1.RootShard:
		return values(o, refName(o.Spec.KcpVirtualWorkspace)), nil
	case *operatorv1alpha1.Shard:
		return values(o, refName(o.Spec.KcpVirtualWorkspace)), nil
	}
	return nil, nil
}

func referenceSecretsOf(obj any) ([]string, error) {
	switch o := obj.(type) {
	case *operatorv1alpha1.RootShard:
		if o.Spec.Cache != nil {
			return values(o, refName(o.Spec.Cache.SecretRef)), nil
		}
	case *operatorv1alpha1.Shard:
		return values(o, ShardReferenceSecrets(o)...), nil
	case *operatorv1alpha1.FrontProxy:
		return values(o, refName(o.Spec.RootShard.SecretRef)), nil
	}
	return nil, nil
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

// usersSecretsOf are the Secrets an object's pods mount, and those its bundles are made of.
// A Shard's are those it mounts by its own spec: those it mounts by its RootShard's (its root
// CA, say) are the RootShard's too. A joined Shard's RootShard is made of names alone, as
// its pods' mounts are.
func usersSecretsOf(obj any) ([]string, error) {
	switch o := obj.(type) {
	case *operatorv1alpha1.RootShard:
		return values(o, append(rootshard.Server(o).MountedSecrets(), BundleSources(o.Spec.CABundleSecretRef, o.Spec.ClientCABundleRef)...)...), nil
	case *operatorv1alpha1.Shard:
		rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: ShardRootShard(o)}}
		if o.Spec.RootShard.SecretRef != nil {
			rs = reference.JoinedRootShard(shard.Kind, o.Namespace, o.Name)
		}
		return values(o, append(shard.Server(o, rs).MountedSecrets(), BundleSources(o.Spec.CABundleSecretRef, o.Spec.ClientCABundleRef)...)...), nil
	case *operatorv1alpha1.FrontProxy:
		f := frontproxy.FrontProxy{FrontProxy: o}
		return values(o, append(f.UsersSecrets(), f.BundleSources()...)...), nil
	case *operatorv1alpha1.CacheServer:
		return values(o, cacheserver.CacheServer{CacheServer: o}.UsersSecrets()...), nil
	case *operatorv1alpha1.VirtualWorkspace:
		v := virtualworkspace.VirtualWorkspace{VirtualWorkspace: o}
		return values(o, v.UsersSecrets()...), nil
	}
	return nil, nil
}

// targetsOf are a Kubeconfig's target, as kubeconfig.TargetRef names it, and the root shard
// and the shard a VirtualWorkspace's target names, as VirtualWorkspaceServes names them.
func targetsOf(obj any) ([]string, error) {
	var out []string
	switch o := obj.(type) {
	case *operatorv1alpha1.Kubeconfig:
		if kind, name := kubeconfig.TargetRef(o); kind != "" && name != "" {
			out = append(out, TargetValue(o.Namespace, kind, name))
		}
	case *operatorv1alpha1.VirtualWorkspace:
		if name := refName(o.Spec.Target.RootShardRef); name != "" {
			out = append(out, TargetValue(o.Namespace, rootshard.Kind, name))
		}
		if name := refName(o.Spec.Target.ShardRef); name != "" {
			out = append(out, TargetValue(o.Namespace, shard.Kind, name))
		}
	}
	return out, nil
}

// bootstrapUserOf is the namespace of a RootShard or CacheServer without spec.certificates.
func bootstrapUserOf(obj any) ([]string, error) {
	switch o := obj.(type) {
	case *operatorv1alpha1.RootShard:
		if o.Spec.Certificates == nil {
			return []string{o.Namespace}, nil
		}
	case *operatorv1alpha1.CacheServer:
		if o.Spec.Certificates == nil {
			return []string{o.Namespace}, nil
		}
	}
	return nil, nil
}
