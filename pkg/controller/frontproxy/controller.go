// Package frontproxy realizes FrontProxies in the host cluster: their certificates, signed
// by their RootShard's CAs, their kubeconfig toward the shards, their path mappings, and the
// kcp-front-proxy Deployment and Service, and reports back through status.
package frontproxy

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
	shards       listers.ShardLister
	host         *controller.Host
	recorder     record.EventRecorder
}

// New returns a FrontProxy controller reading our kinds from ours, and the host cluster's
// objects through host, whose caches come from the informer factories kubeHosts and hosts.
func New(client clientset.Interface, ours informers.SharedInformerFactory, host *controller.Host,
	kubeHosts kubeinformers.SharedInformerFactory, hosts cminformers.SharedInformerFactory, recorder record.EventRecorder) (*Controller, error) {
	c := &Controller{
		client:       client,
		frontProxies: ours.Operator().V1alpha1().FrontProxies().Lister(),
		rootShards:   ours.Operator().V1alpha1().RootShards().Lister(),
		shards:       ours.Operator().V1alpha1().Shards().Lister(),
		host:         host,
		recorder:     recorder,
	}
	c.loop = controller.NewLoop(frontproxy.Kind, c.sync)
	ops := ours.Operator().V1alpha1()
	if err := c.loop.WatchAll(
		controller.On(ops.FrontProxies().Informer(), c.loop.Handler()),
		controller.On(ops.RootShards().Informer(), c.loop.HandlerFor(func(m metav1.Object) []string { return c.ofRootShard(m.GetNamespace(), m.GetName()) })),
		// A Shard joining or leaving changes the service-account keys the front proxy verifies.
		controller.On(ops.Shards().Informer(), c.loop.MembershipHandler(c.ofShard)),
		controller.On(kubeHosts.Core().V1().Secrets().Informer(), c.loop.HandlerFor(c.owners)),
		controller.On(kubeHosts.Core().V1().ConfigMaps().Informer(), c.loop.HandlerFor(c.owners)),
		controller.On(kubeHosts.Core().V1().Services().Informer(), c.loop.HandlerFor(c.owners)),
		controller.On(kubeHosts.Apps().V1().Deployments().Informer(), c.loop.HandlerFor(c.owners)),
		controller.On(kubeHosts.Policy().V1().PodDisruptionBudgets().Informer(), c.loop.HandlerFor(c.owners)),
	); err != nil {
		return nil, err
	}
	// cert-manager's objects, once its API is served; and every object again when it comes.
	cm := hosts.Certmanager().V1()
	if err := host.WatchCertManager(c.loop, ops.FrontProxies().Informer(), c.owners, cm.Certificates().Informer()); err != nil {
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

// owners are the FrontProxies a host object concerns: its owner, or every FrontProxy of its
// RootShard.
func (c *Controller) owners(m metav1.Object) []string {
	if name := m.GetLabels()[pki.OwnerLabel(frontproxy.Kind)]; name != "" {
		return []string{m.GetNamespace() + "/" + name}
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

// ofRootShard are the keys of the FrontProxies of a RootShard.
func (c *Controller) ofRootShard(namespace, rootShard string) []string {
	all, err := c.frontProxies.FrontProxies(namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []string
	for _, fp := range all {
		if fp.Spec.RootShard.Reference != nil && fp.Spec.RootShard.Reference.Name == rootShard {
			keys = append(keys, fp.Namespace+"/"+fp.Name)
		}
	}
	return keys
}

// mounting are the FrontProxies of a namespace whose pods mount the user's Secret name.
func (c *Controller) mounting(namespace, name string) []string {
	all, err := c.frontProxies.FrontProxies(namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []string
	for _, fp := range all {
		f := frontproxy.FrontProxy{FrontProxy: fp}
		if slices.Contains(f.UsersSecrets(), name) || slices.Contains(f.BundleSources(), name) {
			keys = append(keys, fp.Namespace+"/"+fp.Name)
		}
	}
	return keys
}
