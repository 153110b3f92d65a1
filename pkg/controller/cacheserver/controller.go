// Package cacheserver realizes CacheServers in the host cluster: their standalone CA, their
// certificates, the kubeconfig root shards and shards reach them with, and the cache-server
// Deployment and Service, and reports back through status.
package cacheserver

import (
	"context"
	"slices"

	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/record"

	"github.com/kcp-setups/apiserver/pkg/controller"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	informers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions"
	listers "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
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
	host         *controller.Host
	recorder     record.EventRecorder
}

// New returns a CacheServer controller reading our kinds from ours, and the host cluster's
// objects through host, whose caches come from the informer factories kubeHosts and hosts.
func New(client clientset.Interface, ours informers.SharedInformerFactory, host *controller.Host,
	kubeHosts kubeinformers.SharedInformerFactory, hosts cminformers.SharedInformerFactory, recorder record.EventRecorder) (*Controller, error) {
	ops := ours.Operator().V1alpha1()
	c := &Controller{
		client:       client,
		cacheServers: ops.CacheServers().Lister(),
		rootShards:   ops.RootShards().Lister(),
		host:         host,
		recorder:     recorder,
	}
	c.loop = controller.NewLoop(cacheserver.Kind, c.sync)
	if err := c.loop.WatchAll(
		controller.On(ops.CacheServers().Informer(), c.loop.Handler()),
		// The last RootShard of a namespace may take the shared bootstrap PKI with it.
		controller.On(ops.RootShards().Informer(), c.loop.HandlerFor(c.bootstrapUsers)),
		controller.On(kubeHosts.Core().V1().Secrets().Informer(), c.loop.HandlerFor(c.owners)),
		controller.On(kubeHosts.Core().V1().Services().Informer(), c.loop.HandlerFor(c.owners)),
		controller.On(kubeHosts.Apps().V1().Deployments().Informer(), c.loop.HandlerFor(c.owners)),
		controller.On(kubeHosts.Policy().V1().PodDisruptionBudgets().Informer(), c.loop.HandlerFor(c.owners)),
	); err != nil {
		return nil, err
	}
	// cert-manager's objects, once its API is served; and every object again when it comes.
	cm := hosts.Certmanager().V1()
	if err := host.WatchCertManager(c.loop, ops.CacheServers().Informer(), c.owners, cm.Certificates().Informer(), cm.Issuers().Informer()); err != nil {
		return nil, err
	}
	// A Secret a user names, mounted by the pods, rolls them when it changes.
	if err := host.WatchUsersSecrets(c.loop, c.mounting); err != nil {
		return nil, err
	}
	return c, nil
}

// Run reconciles with workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return c.loop.Run(ctx, workers)
}

// owners are the CacheServers a host object concerns: its owner, or every CacheServer of
// its namespace that uses the bootstrap PKI it belongs to.
func (c *Controller) owners(m metav1.Object) []string {
	if name := m.GetLabels()[pki.OwnerLabel(cacheserver.Kind)]; name != "" {
		return []string{m.GetNamespace() + "/" + name}
	}
	if certificates.IsBootstrap(m.GetLabels()) {
		return c.bootstrapUsers(m)
	}
	return nil
}

// bootstrapUsers are the CacheServers of an object's namespace without spec.certificates.
func (c *Controller) bootstrapUsers(m metav1.Object) []string {
	all, err := c.cacheServers.CacheServers(m.GetNamespace()).List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []string
	for _, cs := range all {
		if cs.Spec.Certificates == nil {
			keys = append(keys, cs.Namespace+"/"+cs.Name)
		}
	}
	return keys
}

// mounting are the CacheServers of a namespace whose pods mount the user's Secret name.
func (c *Controller) mounting(namespace, name string) []string {
	all, err := c.cacheServers.CacheServers(namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []string
	for _, cs := range all {
		if slices.Contains(cacheserver.CacheServer{CacheServer: cs}.UsersSecrets(), name) {
			keys = append(keys, cs.Namespace+"/"+cs.Name)
		}
	}
	return keys
}
