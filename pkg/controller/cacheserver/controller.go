// Package cacheserver realizes CacheServers in the host cluster: their standalone CA, their
// certificates, the kubeconfig root shards and shards reach them with, and the cache-server
// Deployment and Service, and reports back through status.
package cacheserver

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kcp-setups/apiserver/pkg/controller"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	listers "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
)

// Finalizer keeps a CacheServer until what the controller created for it is gone.
const Finalizer = "operator.kcp.io/cacheserver-cleanup"

// Controller reconciles CacheServers.
type Controller struct {
	loop *controller.Loop

	client       clientset.Interface
	cacheServers listers.CacheServerLister
	rootShards   listers.RootShardLister
	// indexes answer which CacheServers an event concerns.
	indexes  controller.Indexes
	host     *controller.Host
	recorder record.EventRecorder
}

// New returns a CacheServer controller reading our kinds and the host cluster's objects from the
// informers inf, and writing to the host cluster through host.
func New(client clientset.Interface, inf controller.Informers, host *controller.Host, recorder record.EventRecorder) (*Controller, error) {
	ops := inf.Ours.Operator().V1alpha1()
	indexes, err := inf.AddIndexes()
	if err != nil {
		return nil, err
	}
	c := &Controller{
		client:       client,
		indexes:      indexes,
		cacheServers: ops.CacheServers().Lister(),
		rootShards:   ops.RootShards().Lister(),
		host:         host,
		recorder:     recorder,
	}
	c.loop = controller.NewLoop(cacheserver.Kind, c.sync)
	return c, c.watches(inf).Register(c.loop, host, inf)
}

// watches are what a CacheServer's reconcile reads.
func (c *Controller) watches(inf controller.Informers) controller.Watches {
	ops := inf.Ours.Operator().V1alpha1()
	return controller.Watches{
		Own: ops.CacheServers().Informer(),
		Kinds: []controller.Reference{
			// The last RootShard of a namespace may take the shared bootstrap PKI with it.
			{Informer: ops.RootShards().Informer(), Keys: c.bootstrapUsers},
		},
		Host: []controller.HostResource{controller.Secrets, controller.Services, controller.Deployments,
			controller.DisruptionBudgets, controller.Certificates, controller.Issuers},
		Owners:   c.owners,
		Mounting: c.mounting,
	}
}

// Run reconciles with workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return c.loop.Run(ctx, workers)
}

// owners are the CacheServers a host object concerns: its owner, or every CacheServer of
// its namespace that uses the bootstrap PKI it belongs to.
func (c *Controller) owners(m metav1.Object) []string {
	if key := controller.OwnerKey(m, cacheserver.Kind); key != nil {
		return key
	}
	if certificates.IsBootstrap(m.GetLabels()) {
		return c.bootstrapUsers(m)
	}
	return nil
}

// bootstrapUsers are the CacheServers of an object's namespace without spec.certificates.
func (c *Controller) bootstrapUsers(m metav1.Object) []string {
	return controller.Keys(c.indexes.CacheServers, controller.BootstrapIndex, m.GetNamespace())
}

// mounting are the CacheServers of a namespace whose pods mount the user's Secret name.
func (c *Controller) mounting(namespace, name string) []string {
	return controller.Keys(c.indexes.CacheServers, controller.UsersSecretIndex, controller.IndexValue(namespace, name))
}
