package hostcluster

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"

	"github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// JoinLinked resolves the link of the consumer owner of kind, whose spec names the bootstrap
// Secret bootstrap, and returns the RootShard it joins over that link (link.Join): from the
// keyless data of r in the bootstrap's bundles Secret, which the remote link's client writes
// from the stream, with no CA Secret or Issuer of its own. The bootstrap Secret comes from
// the cache of reference Secrets (it keeps the reference label), the bundles Secret from the
// cache of ours and only when the bootstrap owns it by UID. A *reference.Error says why the
// link cannot be used yet: the bootstrap Secret missing, unlabelled or invalid (its client
// certificate expired, say), or the bundles not received (link.ErrBundlesNotReceived).
func (h *Host) JoinLinked(ctx context.Context, kind, namespace, owner, bootstrap string, r reference.Reference) (*reference.Joined, error) {
	resolved, err := h.resolveLinked(ctx, namespace, bootstrap, r)
	if err != nil {
		return nil, err
	}
	j := link.Join(kind, namespace, owner, resolved)
	// A cache client signed over the link (link.CacheClientCertificate) is issued again, as
	// every linked certificate is, once the home's CacheServer signs from another CA.
	if bundles, err := h.Secrets.Secrets(namespace).Get(link.BundlesName(bootstrap)); err == nil {
		if signer := link.CacheSigner(bundles); signer != nil {
			j.Signers[link.CacheClientIssuer(j.RootShard.Name)] = signer
		}
	}
	return &j, nil
}

// resolveLinked is the keyless data of r in the bundles Secret of the bootstrap Secret
// namespace/bootstrap (link.ResolveBundles), with JoinLinked's checks and errors.
func (h *Host) resolveLinked(ctx context.Context, namespace, bootstrap string, r reference.Reference) (*reference.Resolved, error) {
	b, err := h.ReferenceSecrets.Secrets(namespace).Get(bootstrap)
	if apierrors.IsNotFound(err) {
		if h.unlabelledSecret(ctx, namespace, bootstrap) {
			return nil, reference.NotLabelled(namespace, bootstrap, link.BootstrapRole)
		}
		return nil, reference.NotFound(namespace, bootstrap)
	}
	if err != nil {
		return nil, err
	}
	bundles, err := h.Secrets.Secrets(namespace).Get(link.BundlesName(bootstrap))
	// Its client certificate may come from the link CA bundle received since (a rotation).
	if _, err := link.ResolveLinkedBootstrap(b, bundles, time.Now()); err != nil {
		return nil, err
	}
	if apierrors.IsNotFound(err) || err == nil && !link.OwnedBy(bundles, b) {
		return nil, link.BundlesNotReceived(namespace, bootstrap)
	}
	if err != nil {
		return nil, err
	}
	return link.ResolveBundles(bundles, r)
}

// linkedCacheKubeconfig is the kubeconfig Secret the kcp server k (whose cache is signed over
// the link of the bootstrap Secret k.CacheLink) writes toward the home's CacheServer: its URL
// and CA from the link's bundles, the client key pair cert-manager issued into the Secret of
// its cache client Certificate (link.CacheClientCertificate, signed by the LinkIssuer). Nil
// while that is not issued; its Secret's event brings the owner back. A *reference.Error says
// why the link cannot be used (no cache-client data: its Link names no CacheServer).
func (h *Host) linkedCacheKubeconfig(ctx context.Context, k kcp.Server) (*corev1ac.SecretApplyConfiguration, error) {
	r, err := h.resolveLinked(ctx, k.Namespace, k.CacheLink.Name, reference.CacheClient)
	if err != nil {
		return nil, err
	}
	client, err := h.Issued(k.Namespace, link.CacheClientName(k.Name), corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
	if err != nil || client == nil {
		return nil, err
	}
	return link.CacheKubeconfig(k.Namespace, k.CacheKubeconfig(), pki.Labels(k.Kind, k.Name, "cache-kubeconfig"), r, reference.FromSecret(client))
}
