package rootshard

import (
	"context"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
	"github.com/kcp-setups/apiserver/pkg/rotation"
)

// liveCA is the PEM bundle of the live slots of one of rs's intermediate CAs (docs/rotation.md),
// in slot order; issued is false until cert-manager issued the Issuer's slot.
func (c *Controller) liveCA(rs *operatorv1alpha1.RootShard, ca pki.CA) (pem []byte, issued bool, err error) {
	return c.Host.LiveCAs(rs.Namespace, pki.CAName(rs.Name, ca), pki.SlotsOf(rs.Status.Rotations, string(ca)))
}

// liveRoot is the bundle of the live slots of rs's root CA, each with the chain above it,
// each certificate once (docs/rotation.md); issued is false until cert-manager issued the
// Issuer's slot. The user's root CA (caSecretRef) is not read here.
func (c *Controller) liveRoot(rs *operatorv1alpha1.RootShard) (pem []byte, issued bool, err error) {
	chains, issued, err := c.Host.LiveCAChains(rs.Namespace, pki.RootCAName(rs.Name), pki.SlotsOf(rs.Status.Rotations, pki.RootAuthority))
	if err != nil || !issued {
		return nil, issued, err
	}
	return certificates.ChainsBundle(chains...), true, nil
}

// trustBundles are the Secrets <ca>-trust (pki.TrustSecret) that the pods mount to trust a
// CA once it was rotated: its live slots. A CA never rotated has none: its pods mount its
// own Secret.
func (c *Controller) trustBundles(rs *operatorv1alpha1.RootShard) ([]*corev1ac.SecretApplyConfiguration, error) {
	var out []*corev1ac.SecretApplyConfiguration
	if pki.RotationOf(rs.Status.Rotations, pki.RootAuthority) != nil {
		bundle, issued, err := c.liveRoot(rs)
		if err != nil {
			return nil, err
		}
		if issued {
			out = append(out, certificates.TrustBundle(rs.Namespace, pki.RootCAName(rs.Name),
				pki.Labels(rootshard.Kind, rs.Name, pki.RootCATemplateKey+pki.TrustSuffix), bundle))
		}
	}
	for _, ca := range pki.IntermediateCAs {
		if pki.RotationOf(rs.Status.Rotations, string(ca)) == nil {
			continue
		}
		bundle, issued, err := c.liveCA(rs, ca)
		if err != nil {
			return nil, err
		}
		if !issued {
			continue
		}
		out = append(out, certificates.TrustBundle(rs.Namespace, pki.CAName(rs.Name, ca),
			pki.Labels(rootshard.Kind, rs.Name, ca.TemplateKey()+pki.TrustSuffix), bundle))
	}
	return out, nil
}

// advanceRotations takes the RootShard's running CA rotations a step each, from what the
// host shows after a reconcile that wrote wrote objects: the bundles are in the pods once
// nothing was written and the root shard is available, and its shards, its front proxies and
// its VirtualWorkspaces are, but those the rotation does not wait for (rotation.WaitsFor:
// excluded, or created after Start); and, before the shards sign with the new slot of their
// signing leaves (the service-account CA's leaves switching), once every waited-for shard's
// new leaf is issued and its <shard>-service-account-trust holds both keys. The old slots of
// the signing leaves are deleted once the stored RootShard says the old CA was dropped
// (pki.OldDropped). The condition CARotation names what each rotation waits for.
func (c *Controller) advanceRotations(ctx context.Context, rs *operatorv1alpha1.RootShard, status *operatorv1alpha1.RootShardStatus, wrote int) error {
	shards := kinds.ShardsOf(c.Indexes, rs.Namespace, rs.Name)
	// As the old CA slot: once the stored object says the old CA was dropped, so that no
	// reconcile of an older copy of it applies the old slot of a signing leaf again.
	signers := []rotation.Signer{{Owner: rotation.Owner{Kind: rootshard.Kind, Name: rs.Name, UID: rs.UID}, Leaf: kcp.ServiceAccountSecret(rs.Name)}}
	for _, s := range shards {
		signers = append(signers, rotation.Signer{Owner: rotation.Owner{Kind: shard.Kind, Name: s.Name, UID: s.UID}, Leaf: kcp.ServiceAccountSecret(s.Name)})
	}
	return controller.AdvanceRotations(ctx, c.Host, rotation.Input{
		Generation: rs.Generation,
		Rotations:  status.Rotations,
		Issuer:     func(a pki.Authority) string { return pki.RootShardIssuer(rs.Name, a) },
		Object:     rotation.Member{Kind: "RootShard", Namespace: rs.Namespace, Name: rs.Name, Conditions: status.Conditions},
		Wrote:      wrote,
		// The front proxies and the VirtualWorkspaces of the RootShard mount its merged
		// bundles too.
		Members: rotation.Members(shards, kinds.FrontProxiesOf(c.Indexes, rs.Namespace, rs.Name), kinds.VirtualWorkspacesOf(c.Indexes, rs.Namespace, rs.Name)),
		Signers: signers,
		// The consumers its Links' remotes report: in other clusters, they trust the CAs
		// by the bundles the link streams to them.
		Linked: rotation.LinkedOf(kinds.LinksOf(c.Indexes, rs.Namespace, rs.Name)),
	}, &status.Rotations, &status.Conditions)
}
