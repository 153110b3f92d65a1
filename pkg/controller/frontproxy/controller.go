// Package frontproxy realizes FrontProxies in the host cluster: their certificates, signed
// by their RootShard's CAs, their kubeconfig toward the shards, their path mappings, and the
// kcp-front-proxy Deployment and Service, and reports back through status.
package frontproxy

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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
	host              *controller.Host
	recorder          record.EventRecorder
}

// New returns a FrontProxy controller reading our kinds and the host cluster's objects from the
// informers inf, and writing to the host cluster through host.
func New(client clientset.Interface, inf controller.Informers, host *controller.Host, recorder record.EventRecorder) (*Controller, error) {
	ops := inf.Ours.Operator().V1alpha1()
	c := &Controller{
		client:            client,
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
			// A copy of a front-proxy-join Secret appearing or changing (a CA rotated and
			// copied again) re-realizes the FrontProxies that name it.
			{Informer: inf.References.Core().V1().Secrets().Informer(), Keys: controller.NamingSecret(
				func(ns string) controller.Lister[*operatorv1alpha1.FrontProxy] {
					return c.frontProxies.FrontProxies(ns)
				},
				func(fp *operatorv1alpha1.FrontProxy) []string {
					if r := fp.Spec.RootShard.SecretRef; r != nil {
						return []string{r.Name}
					}
					return nil
				})},
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
	rootShards, err := c.rootShards.RootShards(m.GetNamespace()).List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []string
	for _, rs := range rootShards {
		if controller.NamesVirtualWorkspace(&rs.Spec.CommonShardSpec, m.GetName()) {
			keys = append(keys, c.ofRootShard(rs.Namespace, rs.Name)...)
		}
	}
	return keys
}

// ofRootShard are the keys of the FrontProxies of a RootShard.
func (c *Controller) ofRootShard(namespace, rootShard string) []string {
	return controller.Select(c.frontProxies.FrontProxies(namespace), func(fp *operatorv1alpha1.FrontProxy) bool {
		return controller.RefersTo(fp.Spec.RootShard, rootShard)
	})
}

// mounting are the FrontProxies of a namespace whose pods mount the user's Secret name.
func (c *Controller) mounting(namespace, name string) []string {
	return controller.Select(c.frontProxies.FrontProxies(namespace), func(fp *operatorv1alpha1.FrontProxy) bool {
		f := frontproxy.FrontProxy{FrontProxy: fp}
		return slices.Contains(f.UsersSecrets(), name) || slices.Contains(f.BundleSources(), name)
	})
}
