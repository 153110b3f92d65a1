package controller

import (
	"context"

	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
)

// Plan is what realize would write to the host cluster, recorded instead of written: realize
// runs in plan mode (hostcluster.Planning), with the same builders and reads as a reconcile.
// A preview (pkg/preview) is the difference of two plans.
func Plan(ctx context.Context, realize func(ctx context.Context) (int, error)) (*hostcluster.Plan, error) {
	p := &hostcluster.Plan{}
	if _, err := realize(hostcluster.Planning(ctx, p)); err != nil {
		return nil, err
	}
	return p, nil
}
