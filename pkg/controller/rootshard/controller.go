// Package rootshard realizes RootShards in the host cluster: their PKI as cert-manager
// objects now, their workloads next, and reports back through status.
package rootshard

import (
	"context"

	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	"k8s.io/apimachinery/pkg/api/meta"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	informers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions"
	listers "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// Finalizer keeps a RootShard until what the controller created for it is gone.
const Finalizer = "operator.kcp.io/rootshard-cleanup"

// Controller reconciles RootShards.
type Controller struct {
	loop *controller.Loop

	client       clientset.Interface
	rootShards   listers.RootShardLister
	shards       listers.ShardLister
	cacheServers listers.CacheServerLister

	host *controller.Host

	recorder record.EventRecorder
	synced   []cache.InformerSynced
}

// New returns a RootShard controller reading our kinds from ours, and the host cluster's
// objects through host, whose caches come from the informer factories kubeHosts and hosts.
func New(client clientset.Interface, ours informers.SharedInformerFactory, host *controller.Host,
	kubeHosts kubeinformers.SharedInformerFactory, hosts cminformers.SharedInformerFactory, recorder record.EventRecorder) (*Controller, error) {
	c := &Controller{
		client:       client,
		rootShards:   ours.Operator().V1alpha1().RootShards().Lister(),
		shards:       ours.Operator().V1alpha1().Shards().Lister(),
		cacheServers: ours.Operator().V1alpha1().CacheServers().Lister(),
		host:         host,
		recorder:     recorder,
	}
	c.loop = controller.NewLoop(rootshard.Kind, c.sync)

	handlers := []struct {
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		{ours.Operator().V1alpha1().RootShards().Informer(), c.loop.Handler()},
		// A Shard joining or leaving changes status.shards; a CacheServer appearing heals
		// a reference.
		{ours.Operator().V1alpha1().Shards().Informer(), c.byReference(func(obj any) (string, string) {
			s, ok := obj.(*operatorv1alpha1.Shard)
			if !ok || s.Spec.RootShard.Reference == nil {
				return "", ""
			}
			return s.Namespace, s.Spec.RootShard.Reference.Name
		})},
		{ours.Operator().V1alpha1().CacheServers().Informer(), c.allInNamespace()},
		// What the controller owns: status follows it within seconds.
		{hosts.Certmanager().V1().Certificates().Informer(), c.owners()},
		{hosts.Certmanager().V1().Issuers().Informer(), c.owners()},
		{kubeHosts.Core().V1().Secrets().Informer(), c.owners()},
		{kubeHosts.Core().V1().Services().Informer(), c.owners()},
		{kubeHosts.Apps().V1().Deployments().Informer(), c.owners()},
	}
	for _, h := range handlers {
		if _, err := h.informer.AddEventHandler(h.handler); err != nil {
			return nil, err
		}
		c.synced = append(c.synced, h.informer.HasSynced)
	}
	return c, nil
}

// Run reconciles with workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return c.loop.Run(ctx, workers, c.synced...)
}

// owners enqueues the RootShard that owns a host object, by its owner label; an object of
// the shared bootstrap PKI concerns every RootShard of its namespace.
func (c *Controller) owners() cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return
		}
		if name := m.GetLabels()[pki.OwnerLabel(rootshard.Kind)]; name != "" {
			c.loop.Queue.Add(m.GetNamespace() + "/" + name)
			return
		}
		if m.GetLabels()[pki.LabelComponent] == rootshard.BootstrapLabels()[pki.LabelComponent] {
			c.enqueueNamespace(m.GetNamespace())
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }, DeleteFunc: enqueue}
}

// byReference enqueues the RootShard an object points at.
func (c *Controller) byReference(ref func(obj any) (namespace, name string)) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		if ns, name := ref(obj); name != "" {
			c.loop.Queue.Add(ns + "/" + name)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		// A Shard may move between RootShards only by being recreated, but both ends of an
		// update are enqueued in case it ever does.
		UpdateFunc: func(old, obj any) { enqueue(old); enqueue(obj) },
		DeleteFunc: enqueue,
	}
}

// allInNamespace enqueues every RootShard in the namespace of an object.
func (c *Controller) allInNamespace() cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		if m, err := meta.Accessor(obj); err == nil {
			c.enqueueNamespace(m.GetNamespace())
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }, DeleteFunc: enqueue}
}

func (c *Controller) enqueueNamespace(namespace string) {
	all, err := c.rootShards.RootShards(namespace).List(everything)
	if err != nil {
		return
	}
	for _, rs := range all {
		c.loop.Enqueue(rs)
	}
}
