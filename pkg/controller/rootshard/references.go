package rootshard

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// references are the RootShard's reference Secrets, or none until cert-manager has issued
// every CA they are made of. The CA Secrets' events bring the RootShard back, when they are
// issued and whenever a CA rotates, so that the reference Secrets follow.
func (c *Controller) references(ctx context.Context, rs *operatorv1alpha1.RootShard, bundles rootshard.CABundles) ([]*corev1ac.SecretApplyConfiguration, error) {
	cas := reference.RootShardCAs{KeyPairs: map[pki.CA]reference.KeyPair{}, Trust: map[pki.CA][]byte{}, Bundles: bundles}
	for _, ca := range pki.IntermediateCAs {
		// The slot the CA's Issuer signs from (docs/rotation.md).
		s, err := c.Host.Secrets.Secrets(rs.Namespace).Get(pki.IssuerSecret(pki.CAName(rs.Name, ca), rs.Status.Rotations, string(ca)))
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		cas.KeyPairs[ca] = reference.FromSecret(s)
		// And every live slot, which the consumers' pods trust: both while the CA rotates.
		live, issued, err := c.liveCA(rs, ca)
		if err != nil || !issued {
			return nil, err
		}
		cas.Trust[ca] = live
	}
	if ref := rs.Spec.Certificates; ref != nil && ref.CASecretRef != nil {
		// The user's root CA Secret is not labelled as ours, so it is read, not cached.
		root, err := c.Host.UsersCABundle(ctx, rs.Namespace, ref.CASecretRef)
		if err != nil {
			return nil, err
		}
		cas.RootCA = root
	} else {
		// Every live slot of the root CA: both while it rotates (docs/rotation.md).
		root, issued, err := c.liveRoot(rs)
		if err != nil || !issued {
			return nil, err
		}
		cas.RootCA = root
	}
	if cas.Missing(rs) != "" {
		return nil, nil
	}
	return reference.ForRootShard(rs, cas)
}
