// Package rootshard realizes RootShards in the host cluster: their PKI as cert-manager
// objects now, their workloads next, and reports back through status.
package rootshard

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// Controller reconciles RootShards.
type Controller struct {
	controller.Base[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus]
}

// New sets up a RootShard controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.RootShard)

// EtcdClaims are the volume claims of the RootShard's managed etcd (controller.EtcdOwner).
func (c *Controller) EtcdClaims(rs *operatorv1alpha1.RootShard) []string {
	return rootshard.Etcd(rs).ClaimNames()
}

// Watches are what a RootShard's reconcile reads.
func (c *Controller) Watches() controller.Watches {
	return controller.Watches{
		Kinds: []controller.Reference{
			// A Shard joining or leaving changes status.shards, and the service-account keys
			// the root shard verifies.
			{Kind: kinds.Shard, Keys: c.rootShardOfShard},
			// A CacheServer appearing heals a reference.
			{Kind: kinds.CacheServer, Keys: c.InNamespace},
			// So does the VirtualWorkspace it names, whose address its flags carry; and a
			// VirtualWorkspace of its PKI or a FrontProxy becoming available lets a CA
			// rotation go on (advanceRotations).
			{Kind: kinds.VirtualWorkspace, Keys: c.ofVirtualWorkspace},
			{Kind: kinds.FrontProxy, Keys: c.rootShardOfFrontProxy},
		},
		// A copy of a cache-client Secret appearing or changing heals or renews the
		// kubeconfig of the RootShards that name it.
		Referencing: c.Naming(controller.ReferenceSecretIndex),
		// What the controller owns: status follows it within seconds.
		Host: []controller.HostResource{controller.Secrets, controller.ConfigMaps, controller.Services, controller.Deployments, controller.StatefulSets,
			controller.DisruptionBudgets, controller.Certificates, controller.Issuers},
		Owners: c.owners,
		// The RootShards whose pods mount a user's Secret, or whose merged bundles are made
		// of it.
		Mounting: c.Naming(controller.UsersSecretIndex),
	}
}

// owners are the RootShards a host object concerns: its owner by label, or every RootShard of
// its namespace for an object of the shared bootstrap PKI.
func (c *Controller) owners(m metav1.Object) []string {
	if key := controller.OwnerKey(m, rootshard.Kind); key != nil {
		return key
	}
	// A Shard's service-account key is verified by its root shard.
	if name := controller.ShardServiceAccountSecret(m, shard.Kind); name != "" {
		if s, err := kinds.Shard.Lister(c.Indexes, m.GetNamespace()).Get(name); err == nil {
			return c.rootShardOfShard(s)
		}
		return nil
	}
	// A CacheServer's kubeconfig is mounted by the RootShards that use it.
	if certificates.IsBootstrap(m.GetLabels()) || m.GetLabels()[pki.OwnerLabel(cacheserver.Kind)] != "" {
		return c.InNamespace(m)
	}
	return nil
}

// ofVirtualWorkspace are the RootShards a VirtualWorkspace concerns: those that name it
// (spec.kcpVirtualWorkspace), and the one whose PKI it is issued from, its target's.
func (c *Controller) ofVirtualWorkspace(m metav1.Object) []string {
	keys := c.NamingObject(controller.VirtualWorkspaceIndex)(m)
	vw, ok := m.(*operatorv1alpha1.VirtualWorkspace)
	if !ok {
		return keys
	}
	switch t := vw.Spec.Target; {
	case t.RootShardRef != nil:
		keys = append(keys, vw.Namespace+"/"+t.RootShardRef.Name)
	case t.ShardRef != nil:
		if s, err := kinds.Shard.Lister(c.Indexes, vw.Namespace).Get(t.ShardRef.Name); err == nil {
			keys = append(keys, c.rootShardOfShard(s)...)
		}
	}
	return keys
}

// rootShardOfFrontProxy is the RootShard a FrontProxy points at.
func (c *Controller) rootShardOfFrontProxy(m metav1.Object) []string {
	fp, ok := m.(*operatorv1alpha1.FrontProxy)
	if !ok || fp.Spec.RootShard.Reference == nil {
		return nil
	}
	return []string{fp.Namespace + "/" + fp.Spec.RootShard.Reference.Name}
}

// rootShardOfShard is the RootShard a Shard points at.
func (c *Controller) rootShardOfShard(m metav1.Object) []string {
	s, ok := m.(*operatorv1alpha1.Shard)
	if !ok || s.Spec.RootShard.Reference == nil {
		return nil
	}
	return []string{s.Namespace + "/" + s.Spec.RootShard.Reference.Name}
}
