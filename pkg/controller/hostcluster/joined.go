package hostcluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// Join resolves the copy ref names for the consumer owner of kind, and returns the RootShard
// it joins with the local CAs to write (reference.Join). A *reference.Error says why the copy
// cannot be used.
func (h *Host) Join(ctx context.Context, kind, namespace, owner string, ref *corev1.LocalObjectReference, r reference.Reference) (*reference.Joined, error) {
	resolved, err := h.ResolveReference(ctx, namespace, ref.Name, r)
	if err != nil {
		return nil, err
	}
	j := reference.Join(kind, namespace, owner, resolved)
	return &j, nil
}

// CacheKubeconfig is the kubeconfig Secret a root shard or shard k writes toward its
// CacheServer when it names a copy of the CacheServer's cache-client Secret, or a link
// (linkedCacheKubeconfig), and nil when it does not. A *reference.Error says why the copy or
// the link cannot be used.
func (h *Host) CacheKubeconfig(ctx context.Context, k kcp.Server) (*corev1ac.SecretApplyConfiguration, error) {
	if k.CacheLink != nil {
		return h.linkedCacheKubeconfig(ctx, k)
	}
	if k.CacheSecretRef == nil {
		return nil, nil
	}
	r, err := h.ResolveReference(ctx, k.Namespace, k.CacheSecretRef.Name, reference.CacheClient)
	if err != nil {
		return nil, err
	}
	return cacheserver.KubeconfigSecret(k.Namespace, k.CacheKubeconfig(), pki.Labels(k.Kind, k.Name, "cache-kubeconfig"),
		r.CacheURL.String(), r.CACert.PEM, r.Client.PEM.Cert, r.Client.PEM.Key)
}
