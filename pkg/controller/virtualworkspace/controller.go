// Package virtualworkspace realizes VirtualWorkspaces in the host cluster: their certificates,
// signed by their target's RootShard CAs, their kubeconfigs toward the target, and the
// virtual workspace server's Deployment and Service, and reports back through status. A
// VirtualWorkspace whose target does not exist yet says so, and heals when it appears.
package virtualworkspace

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
	"github.com/kcp-setups/apiserver/pkg/resources/virtualworkspace"
)

// Controller reconciles VirtualWorkspaces.
type Controller struct {
	controller.Base[*operatorv1alpha1.VirtualWorkspace, operatorv1alpha1.VirtualWorkspaceStatus]
}

// New sets up a VirtualWorkspace controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.VirtualWorkspace)

// Watches are what a VirtualWorkspace's reconcile reads.
func (c *Controller) Watches() controller.Watches {
	return controller.Watches{
		Kinds: []controller.Reference{
			// A target appearing heals its VirtualWorkspaces; its spec changes theirs (image,
			// addresses, cache, bundles).
			{Kind: kinds.RootShard, Keys: func(m metav1.Object) []string { return c.ofRootShard(m.GetNamespace(), m.GetName()) }},
			{Kind: kinds.Shard, Keys: func(m metav1.Object) []string { return c.ofShard(m.GetNamespace(), m.GetName()) }},
			{Kind: kinds.CacheServer, Keys: c.InNamespace},
		},
		// What the VirtualWorkspace owns, and what its target owns that it mounts (CAs,
		// bundles, the cache's kubeconfig).
		Host: []controller.HostResource{controller.Secrets, controller.Services, controller.Deployments,
			controller.DisruptionBudgets, controller.Certificates},
		Owners: c.owners,
		// The VirtualWorkspaces whose pods mount a user's Secret, or whose client CA bundle is
		// made of it.
		Mounting: c.Naming(controller.UsersSecretIndex),
	}
}

// owners are the VirtualWorkspaces a host object concerns: its owner, the VirtualWorkspaces
// of the RootShard or Shard that owns it, or every VirtualWorkspace of the namespace for a
// CacheServer's.
func (c *Controller) owners(m metav1.Object) []string {
	if key := controller.OwnerKey(m, virtualworkspace.Kind); key != nil {
		return key
	}
	l := m.GetLabels()
	switch {
	case l[pki.OwnerLabel(rootshard.Kind)] != "":
		return c.ofRootShard(m.GetNamespace(), l[pki.OwnerLabel(rootshard.Kind)])
	case l[pki.OwnerLabel(shard.Kind)] != "":
		return c.ofShard(m.GetNamespace(), l[pki.OwnerLabel(shard.Kind)])
	case l[pki.OwnerLabel(cacheserver.Kind)] != "":
		return c.InNamespace(m)
	}
	return nil
}

// ofRootShard are the VirtualWorkspaces whose PKI is a RootShard's: those that serve it, and
// those that serve one of its Shards.
func (c *Controller) ofRootShard(namespace, rootShard string) []string {
	return controller.Matching(kinds.VirtualWorkspacesOf(c.Indexes, namespace, rootShard), func(*operatorv1alpha1.VirtualWorkspace) bool { return true })
}

// ofShard are the VirtualWorkspaces that serve a Shard.
func (c *Controller) ofShard(namespace, name string) []string {
	return c.Keys(controller.TargetIndex, controller.TargetValue(namespace, shard.Kind, name))
}
