// Package shard realizes Shards in the host cluster: their certificates, signed by their
// RootShard's CAs, their kubeconfigs and their kcp server, and reports back through status.
// A Shard whose RootShard does not exist yet says so, and heals when it appears.
package shard

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	listers "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// Finalizer keeps a Shard until what the controller created for it is gone.
const Finalizer = "operator.kcp.io/shard-cleanup"

// Controller reconciles Shards.
type Controller struct {
	loop *controller.Loop

	client       clientset.Interface
	shards       listers.ShardLister
	rootShards   listers.RootShardLister
	cacheServers listers.CacheServerLister
	// virtualWorkspaces serve the Shards that name one.
	virtualWorkspaces listers.VirtualWorkspaceLister
	// indexes answer which Shards an event concerns.
	indexes  controller.Indexes
	host     *controller.Host
	recorder record.EventRecorder
}

// New returns a Shard controller reading our kinds and the host cluster's objects from the
// informers inf, and writing to the host cluster through host.
func New(client clientset.Interface, inf controller.Informers, host *controller.Host, recorder record.EventRecorder) (*Controller, error) {
	ops := inf.Ours.Operator().V1alpha1()
	indexes, err := inf.AddIndexes()
	if err != nil {
		return nil, err
	}
	c := &Controller{
		client:            client,
		indexes:           indexes,
		shards:            ops.Shards().Lister(),
		rootShards:        ops.RootShards().Lister(),
		cacheServers:      ops.CacheServers().Lister(),
		virtualWorkspaces: ops.VirtualWorkspaces().Lister(),
		host:              host,
		recorder:          recorder,
	}
	c.loop = controller.NewLoop(shard.Kind, c.sync)
	return c, c.watches(inf).Register(c.loop, host, inf)
}

// watches are what a Shard's reconcile reads.
func (c *Controller) watches(inf controller.Informers) controller.Watches {
	ops := inf.Ours.Operator().V1alpha1()
	return controller.Watches{
		Own: ops.Shards().Informer(),
		Kinds: []controller.Reference{
			// A Shard joining or leaving changes the service-account keys its siblings verify.
			{Informer: ops.Shards().Informer(), Keys: c.siblings, Membership: true},
			// A RootShard appearing heals its Shards; its spec changes theirs (external hostname).
			{Informer: ops.RootShards().Informer(), Keys: func(m metav1.Object) []string { return c.shardsOf(m.GetNamespace(), m.GetName()) }},
			{Informer: ops.CacheServers().Informer(), Keys: func(m metav1.Object) []string { return c.shardsOf(m.GetNamespace(), "") }},
			// The VirtualWorkspace it names appearing heals it; its address is in its flags.
			{Informer: ops.VirtualWorkspaces().Informer(), Keys: c.namingVirtualWorkspace},
		},
		// A copy of a shard-join or cache-client Secret appearing or changing (a CA rotated
		// and copied again) re-realizes the Shards that name it.
		Referencing: func(namespace, name string) []string {
			return controller.Keys(c.indexes.Shards, controller.ReferenceSecretIndex, controller.IndexValue(namespace, name))
		},
		// What the Shard owns, and what its RootShard owns that it mounts (CAs, bundles).
		Host: []controller.HostResource{controller.Secrets, controller.Services, controller.Deployments, controller.StatefulSets,
			controller.DisruptionBudgets, controller.Certificates},
		Owners:   c.owners,
		Mounting: c.mounting,
	}
}

// Run reconciles with workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return c.loop.Run(ctx, workers)
}

// owners are the Shards a host object concerns: its owner, or every Shard of its RootShard.
func (c *Controller) owners(m metav1.Object) []string {
	if name := m.GetLabels()[pki.OwnerLabel(shard.Kind)]; name != "" {
		keys := []string{m.GetNamespace() + "/" + name}
		// A Shard's service-account key is verified by its siblings too.
		if controller.ShardServiceAccountSecret(m, shard.Kind) != "" {
			if s, err := c.shards.Shards(m.GetNamespace()).Get(name); err == nil {
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
		return c.shardsOf(m.GetNamespace(), "")
	}
	return nil
}

// shardsOf are the keys of the Shards of a RootShard, or of every Shard when rootShard is "".
func (c *Controller) shardsOf(namespace, rootShard string) []string {
	if rootShard == "" {
		return controller.InNamespace(c.indexes.Shards, namespace)
	}
	return c.indexes.ShardKeysOf(namespace, rootShard)
}

// namingVirtualWorkspace are the Shards that name a VirtualWorkspace in
// spec.kcpVirtualWorkspace.
func (c *Controller) namingVirtualWorkspace(m metav1.Object) []string {
	return controller.Keys(c.indexes.Shards, controller.VirtualWorkspaceIndex, controller.IndexValue(m.GetNamespace(), m.GetName()))
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
	candidates := controller.Indexed[*operatorv1alpha1.Shard](c.indexes.Shards, controller.UsersSecretIndex, value)
	for _, rs := range controller.Indexed[*operatorv1alpha1.RootShard](c.indexes.RootShards, controller.UsersSecretIndex, value) {
		candidates = append(candidates, c.indexes.ShardsOf(namespace, rs.Name)...)
	}
	return controller.Matching(candidates, func(s *operatorv1alpha1.Shard) bool {
		rs, err := c.rootShards.RootShards(namespace).Get(rootShardName(s))
		if s.Spec.RootShard.SecretRef != nil {
			// Names alone: what the pods mount does not depend on the copy's content.
			rs, err = reference.JoinedRootShard(shard.Kind, namespace, s.Name), nil
		}
		// A user's CA bundle Secret is not mounted, but the Shard's bundle is made of it.
		return err == nil && (slices.Contains(shard.Server(s, rs).MountedSecrets(), name) ||
			slices.Contains(controller.BundleSources(s.Spec.CABundleSecretRef, s.Spec.ClientCABundleRef), name))
	})
}
