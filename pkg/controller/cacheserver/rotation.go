package cacheserver

import (
	"context"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/rotation"
)

// liveCA is the PEM bundle of the live slots of the cache server's CA (docs/rotation.md), or
// nil before cert-manager issued the Issuer's slot.
func (c *Controller) liveCA(cs cacheserver.CacheServer) ([]byte, error) {
	bundle, _, err := c.Host.LiveCAs(cs.Namespace, cs.CAName(), pki.SlotsOf(cs.Status.Rotations, pki.CacheAuthority))
	return bundle, err
}

// advanceRotations takes the rotation of the cache server's CA a step, from what the host
// shows after a reconcile that wrote wrote objects.
func (c *Controller) advanceRotations(ctx context.Context, cs cacheserver.CacheServer, status *operatorv1alpha1.CacheServerStatus, wrote int) error {
	return controller.AdvanceRotations(ctx, c.Host, rotation.Input{
		Generation: cs.Generation,
		Rotations:  status.Rotations,
		Issuer:     func(pki.Authority) string { return cs.CAName() },
		Object:     rotation.Member{Kind: "CacheServer", Namespace: cs.Namespace, Name: cs.Name, Conditions: status.Conditions},
		Wrote:      wrote,
	}, &status.Rotations, &status.Conditions)
}
