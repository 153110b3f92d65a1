// Package frontproxy realizes FrontProxies in the host cluster: their certificates, signed
// by their RootShard's CAs, their kubeconfig toward the shards, their path mappings, and the
// kcp-front-proxy Deployment and Service, and reports back through status.
package frontproxy

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	listers "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// Finalizer keeps a FrontProxy until what the controller created for it is gone.
const Finalizer = "operator.kcp.io/frontproxy-cleanup"

// Controller reconciles FrontProxies.
type Controller struct {
	loop *controller.Loop

	client       clientset.Interface
	frontProxies listers.FrontProxyLister
	rootShards   listers.RootShardLister
	// virtualWorkspaces serve the root shards' /services/.
	virtualWorkspaces listers.VirtualWorkspaceLister
	shards            listers.ShardLister
	// indexes answer which FrontProxies an event concerns.
	indexes  controller.Indexes
	host     *controller.Host
	recorder record.EventRecorder
}

// New returns a FrontProxy controller reading our kinds and the host cluster's objects from the
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
		frontProxies:      ops.FrontProxies().Lister(),
		rootShards:        ops.RootShards().Lister(),
		virtualWorkspaces: ops.VirtualWorkspaces().Lister(),
		shards:            ops.Shards().Lister(),
		host:              host,
		recorder:          recorder,
	}
	c.loop = controller.NewLoop(frontproxy.Kind, c.sync)
	return c, c.watches(inf).Register(c.loop, host, inf)
}

// watches are what a FrontProxy's reconcile reads.
func (c *Controller) watches(inf controller.Informers) controller.Watches {
	ops := inf.Ours.Operator().V1alpha1()
	return controller.Watches{
		Own: ops.FrontProxies().Informer(),
		Kinds: []controller.Reference{
			{Informer: ops.RootShards().Informer(), Keys: func(m metav1.Object) []string { return c.ofRootShard(m.GetNamespace(), m.GetName()) }},
			// A Shard joining or leaving changes the service-account keys the front proxy verifies.
			{Informer: ops.Shards().Informer(), Keys: c.ofShard, Membership: true},
			// The root shard's VirtualWorkspace serves /services/.
			{Informer: ops.VirtualWorkspaces().Informer(), Keys: c.ofVirtualWorkspace},
		},
		// A copy of a front-proxy-join Secret appearing or changing (a CA rotated and copied
		// again) re-realizes the FrontProxies that name it.
		Referencing: func(namespace, name string) []string {
			return controller.Keys(c.indexes.FrontProxies, controller.ReferenceSecretIndex, controller.IndexValue(namespace, name))
		},
		Host: []controller.HostResource{controller.Secrets, controller.ConfigMaps, controller.Services,
			controller.Deployments, controller.DisruptionBudgets, controller.Certificates},
		Owners:   c.owners,
		Mounting: c.mounting,
	}
}

// Run reconciles with workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return c.loop.Run(ctx, workers)
}

// owners are the FrontProxies a host object concerns: its owner, or every FrontProxy of its
// RootShard.
func (c *Controller) owners(m metav1.Object) []string {
	if key := controller.OwnerKey(m, frontproxy.Kind); key != nil {
		return key
	}
	if rs := m.GetLabels()[pki.OwnerLabel(rootshard.Kind)]; rs != "" {
		return c.ofRootShard(m.GetNamespace(), rs)
	}
	// A Shard's service-account key is verified by its RootShard's front proxies.
	if name := controller.ShardServiceAccountSecret(m, shard.Kind); name != "" {
		if s, err := c.shards.Shards(m.GetNamespace()).Get(name); err == nil {
			return c.ofShard(s)
		}
	}
	return nil
}

// ofShard are the keys of the FrontProxies of a Shard's RootShard.
func (c *Controller) ofShard(m metav1.Object) []string {
	s, ok := m.(*operatorv1alpha1.Shard)
	if !ok || controller.ShardRootShard(s) == "" {
		return nil
	}
	return c.ofRootShard(s.Namespace, controller.ShardRootShard(s))
}

// ofVirtualWorkspace are the keys of the FrontProxies of the RootShards that name a
// VirtualWorkspace.
func (c *Controller) ofVirtualWorkspace(m metav1.Object) []string {
	var keys []string
	for _, rs := range controller.Indexed[*operatorv1alpha1.RootShard](c.indexes.RootShards, controller.VirtualWorkspaceIndex,
		controller.IndexValue(m.GetNamespace(), m.GetName())) {
		keys = append(keys, c.ofRootShard(rs.Namespace, rs.Name)...)
	}
	return keys
}

// ofRootShard are the keys of the FrontProxies of a RootShard.
func (c *Controller) ofRootShard(namespace, rootShard string) []string {
	return controller.Keys(c.indexes.FrontProxies, controller.RootShardIndex, controller.IndexValue(namespace, rootShard))
}

// mounting are the FrontProxies of a namespace whose pods mount the user's Secret name, or
// whose bundles are made of it.
func (c *Controller) mounting(namespace, name string) []string {
	return controller.Keys(c.indexes.FrontProxies, controller.UsersSecretIndex, controller.IndexValue(namespace, name))
}
