// Package virtualworkspace realizes VirtualWorkspaces in the host cluster: their certificates,
// signed by their target's RootShard CAs, their kubeconfigs toward the target, and the
// virtual workspace server's Deployment and Service, and reports back through status. A
// VirtualWorkspace whose target does not exist yet says so, and heals when it appears.
package virtualworkspace

import (
	"fmt"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Controller reconciles VirtualWorkspaces.
type Controller struct {
	kinds.VirtualWorkspaceBase
}

// New sets up a VirtualWorkspace controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.VirtualWorkspace)

// missing is why a VirtualWorkspace's target cannot be resolved yet.
type missing struct{ reason, message, what string }

// target resolves the root shard or shard a VirtualWorkspace serves, as the kcp builders see
// it, or says what is missing; substitute, when set, stands for the stored RootShard of its
// name (a preview's).
func (c *Controller) target(vw *operatorv1alpha1.VirtualWorkspace, substitute *operatorv1alpha1.RootShard) (kcp.Server, *missing, error) {
	ns := vw.Namespace
	rootShard := func(name string) (*operatorv1alpha1.RootShard, *missing, error) {
		if substitute != nil && substitute.Name == name {
			// A preview's: the RootShard as a change would store it.
			return substitute, nil, nil
		}
		rs, err := kinds.RootShard.Lister(c.Indexes, ns).Get(name)
		if apierrors.IsNotFound(err) {
			return nil, &missing{operatorv1alpha1.ReasonRootShardNotFound,
				fmt.Sprintf("RootShard %q does not exist in namespace %q", name, ns), "RootShard"}, nil
		}
		return rs, nil, err
	}
	switch t := vw.Spec.Target; {
	case t.RootShardRef != nil:
		rs, miss, err := rootShard(t.RootShardRef.Name)
		if rs == nil {
			return kcp.Server{}, miss, err
		}
		return rootshard.Server(rs), nil, nil
	case t.ShardRef != nil:
		s, err := kinds.Shard.Lister(c.Indexes, ns).Get(t.ShardRef.Name)
		if apierrors.IsNotFound(err) {
			return kcp.Server{}, &missing{operatorv1alpha1.ReasonShardNotFound,
				fmt.Sprintf("Shard %q does not exist in namespace %q", t.ShardRef.Name, ns), "Shard"}, nil
		}
		if err != nil {
			return kcp.Server{}, nil, err
		}
		rs, miss, err := rootShard(controller.ShardRootShard(s))
		if rs == nil {
			return kcp.Server{}, miss, err
		}
		return shard.Server(s, rs), nil, nil
	}
	// Validation requires exactly one target; an object stored before it did waits.
	return kcp.Server{}, &missing{operatorv1alpha1.ReasonRootShardNotFound, "spec.target names neither a RootShard nor a Shard", "target"}, nil
}
