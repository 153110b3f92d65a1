// Package rootshard realizes RootShards in the host cluster: their PKI as cert-manager
// objects now, their workloads next, and reports back through status.
package rootshard

import (
	"context"
	"slices"

	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	informers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions"
	listers "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
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

	ops := ours.Operator().V1alpha1()
	if err := c.loop.WatchAll(
		controller.On(ops.RootShards().Informer(), c.loop.Handler()),
		// A Shard joining or leaving changes status.shards, and the service-account keys the
		// root shard verifies.
		controller.On(ops.Shards().Informer(), c.loop.HandlerFor(c.rootShardOfShard)),
		// A CacheServer appearing heals a reference.
		controller.On(ops.CacheServers().Informer(), c.loop.HandlerFor(c.inNamespace)),
		// What the controller owns: status follows it within seconds.
		controller.On(kubeHosts.Core().V1().Secrets().Informer(), c.loop.HandlerFor(c.owners)),
		controller.On(kubeHosts.Core().V1().Services().Informer(), c.loop.HandlerFor(c.owners)),
		controller.On(kubeHosts.Apps().V1().Deployments().Informer(), c.loop.HandlerFor(c.owners)),
		controller.On(kubeHosts.Policy().V1().PodDisruptionBudgets().Informer(), c.loop.HandlerFor(c.owners)),
	); err != nil {
		return nil, err
	}
	// cert-manager's objects, once its API is served; and every object again when it comes.
	cm := hosts.Certmanager().V1()
	if err := host.WatchCertManager(c.loop, ops.RootShards().Informer(), c.owners, cm.Certificates().Informer(), cm.Issuers().Informer()); err != nil {
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

// owners are the RootShards a host object concerns: its owner by label, or every RootShard of
// its namespace for an object of the shared bootstrap PKI.
func (c *Controller) owners(m metav1.Object) []string {
	if name := m.GetLabels()[pki.OwnerLabel(rootshard.Kind)]; name != "" {
		return []string{m.GetNamespace() + "/" + name}
	}
	// A Shard's service-account key is verified by its root shard.
	if name := controller.ShardServiceAccountSecret(m, shard.Kind); name != "" {
		if s, err := c.shards.Shards(m.GetNamespace()).Get(name); err == nil {
			return c.rootShardOfShard(s)
		}
		return nil
	}
	// A CacheServer's kubeconfig is mounted by the RootShards that use it.
	if certificates.IsBootstrap(m.GetLabels()) || m.GetLabels()[pki.OwnerLabel(cacheserver.Kind)] != "" {
		return c.inNamespace(m)
	}
	return nil
}

// rootShardOfShard is the RootShard a Shard points at.
func (c *Controller) rootShardOfShard(m metav1.Object) []string {
	s, ok := m.(*operatorv1alpha1.Shard)
	if !ok || s.Spec.RootShard.Reference == nil {
		return nil
	}
	return []string{s.Namespace + "/" + s.Spec.RootShard.Reference.Name}
}

// inNamespace are every RootShard of an object's namespace.
func (c *Controller) inNamespace(m metav1.Object) []string {
	all, err := c.rootShards.RootShards(m.GetNamespace()).List(everything)
	if err != nil {
		return nil
	}
	keys := make([]string, 0, len(all))
	for _, rs := range all {
		keys = append(keys, rs.Namespace+"/"+rs.Name)
	}
	return keys
}

// mounting are the RootShards of a namespace whose pods mount the Secret name.
func (c *Controller) mounting(namespace, name string) []string {
	all, err := c.rootShards.RootShards(namespace).List(everything)
	if err != nil {
		return nil
	}
	var keys []string
	for _, rs := range all {
		// A user's CA bundle Secret is not mounted, but the merged bundles are made of it.
		if slices.Contains(rootshard.Shard(rs).MountedSecrets(), name) ||
			slices.Contains(controller.BundleSources(rs.Spec.CABundleSecretRef, rs.Spec.ClientCABundleRef), name) {
			keys = append(keys, rs.Namespace+"/"+rs.Name)
		}
	}
	return keys
}
