package cacheserver

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
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
	if len(status.Rotations) == 0 {
		meta.RemoveStatusCondition(&status.Conditions, operatorv1alpha1.ConditionCARotation)
		return nil
	}
	var unsettled []string
	if wrote > 0 {
		unsettled = append(unsettled, controller.Writes)
	}
	if !meta.IsStatusConditionTrue(status.Conditions, operatorv1alpha1.ConditionAvailable) {
		unsettled = append(unsettled, controller.Unavailable("CacheServer", cs.Namespace, cs.Name, status.Conditions))
	}
	next, waiting, err := c.Host.AdvanceRotations(ctx, cs.Namespace, func(pki.Authority) string { return cs.CAName() }, status.Rotations,
		func(operatorv1alpha1.CARotationState) []string { return unsettled })
	if err != nil {
		return err
	}
	status.Rotations = next
	controller.SetRotationCondition(&status.Conditions, cs.Generation, next, waiting)
	return nil
}
