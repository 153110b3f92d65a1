// Package shard realizes Shards in the host cluster: their certificates, signed by their
// RootShard's CAs, their kubeconfigs and their kcp server, and reports back through status.
// A Shard whose RootShard does not exist yet says so, and heals when it appears.
package shard

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// Controller reconciles Shards.
type Controller struct {
	controller.Base[*operatorv1alpha1.Shard, operatorv1alpha1.ShardStatus]
}

// New sets up a Shard controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.Shard)

// EtcdClaims are the volume claims of the Shard's managed etcd (controller.EtcdOwner).
func (c *Controller) EtcdClaims(s *operatorv1alpha1.Shard) []string { return shard.EtcdClaimNames(s) }

// Watches are what a Shard's reconcile reads.
func (c *Controller) Watches() controller.Watches {
	return controller.Watches{
		Kinds: []controller.Reference{
			// A Shard joining or leaving changes the service-account keys its siblings verify.
			{Kind: kinds.Shard, Keys: c.siblings, Membership: true},
			// A RootShard appearing heals its Shards; its spec changes theirs (external hostname).
			{Kind: kinds.RootShard, Keys: func(m metav1.Object) []string { return c.shardsOf(m.GetNamespace(), m.GetName()) }},
			{Kind: kinds.CacheServer, Keys: c.InNamespace},
			// The VirtualWorkspace it names appearing heals it; its address is in its flags.
			{Kind: kinds.VirtualWorkspace, Keys: c.NamingObject(controller.VirtualWorkspaceIndex)},
		},
		// A copy of a shard-join or cache-client Secret appearing or changing (a CA rotated
		// and copied again) re-realizes the Shards that name it.
		Referencing: c.Naming(controller.ReferenceSecretIndex),
		// What the Shard owns, and what its RootShard owns that it mounts (CAs, bundles).
		Host: []controller.HostResource{controller.Secrets, controller.Services, controller.Deployments, controller.StatefulSets,
			controller.DisruptionBudgets, controller.Certificates},
		Owners:   c.owners,
		Mounting: c.mounting,
	}
}

// owners are the Shards a host object concerns: its owner, or every Shard of its RootShard.
func (c *Controller) owners(m metav1.Object) []string {
	if name := m.GetLabels()[pki.OwnerLabel(shard.Kind)]; name != "" {
		keys := []string{m.GetNamespace() + "/" + name}
		// A Shard's service-account key is verified by its siblings too.
		if controller.ShardServiceAccountSecret(m, shard.Kind) != "" {
			if s, err := kinds.Shard.Lister(c.Indexes, m.GetNamespace()).Get(name); err == nil {
				keys = append(keys, c.siblings(s)...)
			}
		}
		return keys
	}
	if rs := m.GetLabels()[pki.OwnerLabel(rootshard.Kind)]; rs != "" {
		return c.shardsOf(m.GetNamespace(), rs)
	}
	// A CacheServer's kubeconfig is mounted by the Shards that use it.
	if m.GetLabels()[pki.OwnerLabel(cacheserver.Kind)] != "" {
		return c.InNamespace(m)
	}
	return nil
}

// shardsOf are the keys of the Shards of a RootShard.
func (c *Controller) shardsOf(namespace, rootShard string) []string {
	return kinds.ShardKeysOf(c.Indexes, namespace, rootShard)
}

// siblings are the keys of the other Shards of a Shard's RootShard.
func (c *Controller) siblings(m metav1.Object) []string {
	s, ok := m.(*operatorv1alpha1.Shard)
	if !ok || rootShardName(s) == "" {
		return nil
	}
	self := s.Namespace + "/" + s.Name
	return slices.DeleteFunc(c.shardsOf(s.Namespace, rootShardName(s)), func(k string) bool { return k == self })
}

func rootShardName(s *operatorv1alpha1.Shard) string { return controller.ShardRootShard(s) }

// mounting are the Shards of a namespace whose pods mount the Secret name: among those whose
// spec names it and those of the RootShards whose spec does.
func (c *Controller) mounting(namespace, name string) []string {
	value := controller.IndexValue(namespace, name)
	candidates := controller.Indexed[*operatorv1alpha1.Shard](kinds.Shard.Cache(c.Indexes), controller.UsersSecretIndex, value)
	for _, rs := range controller.Indexed[*operatorv1alpha1.RootShard](kinds.RootShard.Cache(c.Indexes), controller.UsersSecretIndex, value) {
		candidates = append(candidates, kinds.ShardsOf(c.Indexes, namespace, rs.Name)...)
	}
	return controller.Matching(candidates, func(s *operatorv1alpha1.Shard) bool {
		rs, err := kinds.RootShard.Lister(c.Indexes, namespace).Get(rootShardName(s))
		if s.Spec.RootShard.SecretRef != nil {
			// Names alone: what the pods mount does not depend on the copy's content.
			rs, err = reference.JoinedRootShard(shard.Kind, namespace, s.Name), nil
		}
		// A user's CA bundle Secret is not mounted, but the Shard's bundle is made of it.
		return err == nil && (slices.Contains(shard.Server(s, rs).MountedSecrets(), name) ||
			slices.Contains(controller.BundleSources(s.Spec.CABundleSecretRef, s.Spec.ClientCABundleRef), name))
	})
}
