package controller

import (
	"context"
	"errors"

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

// ErrNotPlanned is the error of a Plan of an object whose setup is not this server's to
// plan: a joined or linked component, whose RootShard is another cluster's or setup's.
var ErrNotPlanned = errors.New("not previewed: its RootShard is a copy's or a link's")
