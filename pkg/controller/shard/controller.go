// Package shard realizes Shards in the host cluster: their certificates, signed by their
// RootShard's CAs, their kubeconfigs and their kcp server, and reports back through status.
// A Shard whose RootShard does not exist yet says so, and heals when it appears.
package shard

import (
	"context"
	"slices"

	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	informers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions"
	listers "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
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
	host         *controller.Host
	recorder     record.EventRecorder
}

// New returns a Shard controller reading our kinds from ours, and the host cluster's objects
// through host, whose caches come from the informer factories kubeHosts and hosts.
func New(client clientset.Interface, ours informers.SharedInformerFactory, host *controller.Host,
	kubeHosts kubeinformers.SharedInformerFactory, hosts cminformers.SharedInformerFactory, recorder record.EventRecorder) (*Controller, error) {
	c := &Controller{
		client:       client,
		shards:       ours.Operator().V1alpha1().Shards().Lister(),
		rootShards:   ours.Operator().V1alpha1().RootShards().Lister(),
		cacheServers: ours.Operator().V1alpha1().CacheServers().Lister(),
		host:         host,
		recorder:     recorder,
	}
	c.loop = controller.NewLoop(shard.Kind, c.sync)

	ops := ours.Operator().V1alpha1()
	if err := c.loop.WatchAll(
		controller.On(ops.Shards().Informer(), c.loop.Handler()),
		// A Shard joining or leaving changes the service-account keys its siblings verify.
		controller.On(ops.Shards().Informer(), c.loop.MembershipHandler(c.siblings)),
		// A RootShard appearing heals its Shards; its spec changes theirs (external hostname).
		controller.On(ops.RootShards().Informer(), c.loop.HandlerFor(func(m metav1.Object) []string { return c.shardsOf(m.GetNamespace(), m.GetName()) })),
		controller.On(ops.CacheServers().Informer(), c.loop.HandlerFor(func(m metav1.Object) []string { return c.shardsOf(m.GetNamespace(), "") })),
		// What the Shard owns, and what its RootShard owns that it mounts (CAs, bundles).
		controller.On(kubeHosts.Core().V1().Secrets().Informer(), c.loop.HandlerFor(c.owners)),
		controller.On(kubeHosts.Core().V1().Services().Informer(), c.loop.HandlerFor(c.owners)),
		controller.On(kubeHosts.Apps().V1().Deployments().Informer(), c.loop.HandlerFor(c.owners)),
		controller.On(kubeHosts.Policy().V1().PodDisruptionBudgets().Informer(), c.loop.HandlerFor(c.owners)),
	); err != nil {
		return nil, err
	}
	// cert-manager's objects, once its API is served; and every object again when it comes.
	cm := hosts.Certmanager().V1()
	if err := host.WatchCertManager(c.loop, ops.Shards().Informer(), c.owners, cm.Certificates().Informer()); err != nil {
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
	all, err := c.shards.Shards(namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []string
	for _, s := range all {
		if rootShard == "" || rootShardName(s) == rootShard {
			keys = append(keys, s.Namespace+"/"+s.Name)
		}
	}
	return keys
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

// mounting are the Shards of a namespace whose pods mount the Secret name.
func (c *Controller) mounting(namespace, name string) []string {
	all, err := c.shards.Shards(namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []string
	for _, s := range all {
		rs, err := c.rootShards.RootShards(namespace).Get(rootShardName(s))
		// A user's CA bundle Secret is not mounted, but the Shard's bundle is made of it.
		if err == nil && (slices.Contains(shard.Shard(s, rs).MountedSecrets(), name) ||
			slices.Contains(controller.BundleSources(s.Spec.CABundleSecretRef, s.Spec.ClientCABundleRef), name)) {
			keys = append(keys, s.Namespace+"/"+s.Name)
		}
	}
	return keys
}
