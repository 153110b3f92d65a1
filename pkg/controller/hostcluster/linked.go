package hostcluster

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

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
	resolved, err := link.ResolveBundles(bundles, r)
	if err != nil {
		return nil, err
	}
	j := link.Join(kind, namespace, owner, resolved)
	return &j, nil
}
