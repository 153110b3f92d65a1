// Package frontproxy realizes FrontProxies in the host cluster: their certificates, signed
// by their RootShard's CAs, their kubeconfig toward the shards, their path mappings, and the
// kcp-front-proxy Deployment and Service, and reports back through status.
package frontproxy

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	operatorinformers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// Finalizer keeps a FrontProxy until what the controller created for it is gone.
const Finalizer = "operator.kcp.io/frontproxy-cleanup"

// Kind is the FrontProxy to the shared controller code.
var Kind = controller.Kind[*operatorv1alpha1.FrontProxy, operatorv1alpha1.FrontProxyStatus]{
	Name: frontproxy.Kind, Noun: "front proxy", Finalizer: Finalizer,
	Informer: func(i operatorinformers.Interface) cache.SharedIndexInformer { return i.FrontProxies().Informer() },
	Lister: func(l controller.Listers, ns string) controller.Getter[*operatorv1alpha1.FrontProxy] {
		return l.FrontProxies.FrontProxies(ns)
	},
	Client: func(c clientset.Interface, ns string) controller.Client[*operatorv1alpha1.FrontProxy] {
		return c.OperatorV1alpha1().FrontProxies(ns)
	},
	Status: func(fp *operatorv1alpha1.FrontProxy) *operatorv1alpha1.FrontProxyStatus { return &fp.Status },
	Common: func(s *operatorv1alpha1.FrontProxyStatus) controller.Common {
		return controller.SetupStatus(&s.Phase, &s.ObservedGeneration, &s.Conditions)
	},
}

// Controller reconciles FrontProxies.
type Controller struct {
	*controller.Base[*operatorv1alpha1.FrontProxy, operatorv1alpha1.FrontProxyStatus]
}

// New returns a FrontProxy controller reading our kinds and the host cluster's objects from the
// informers inf, and writing to the host cluster through host.
func New(client clientset.Interface, inf controller.Informers, host *hostcluster.Host, recorder record.EventRecorder) (*Controller, error) {
	c := newController(controller.NewBase(Kind, client, controller.Indexes{}, host, recorder))
	return c, c.Watch(inf, c.sync, c.watches)
}

func newController(base *controller.Base[*operatorv1alpha1.FrontProxy, operatorv1alpha1.FrontProxyStatus]) *Controller {
	return &Controller{Base: base}
}

// watches are what a FrontProxy's reconcile reads.
func (c *Controller) watches(inf controller.Informers) controller.Watches {
	ops := inf.Ours.Operator().V1alpha1()
	return controller.Watches{
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
			return controller.Keys(c.Indexes.FrontProxies, controller.ReferenceSecretIndex, controller.IndexValue(namespace, name))
		},
		Host: []controller.HostResource{controller.Secrets, controller.ConfigMaps, controller.Services,
			controller.Deployments, controller.DisruptionBudgets, controller.Certificates},
		Owners:   c.owners,
		Mounting: c.mounting,
	}
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
		if s, err := c.Shards.Shards(m.GetNamespace()).Get(name); err == nil {
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
	for _, rs := range controller.Indexed[*operatorv1alpha1.RootShard](c.Indexes.RootShards, controller.VirtualWorkspaceIndex,
		controller.IndexValue(m.GetNamespace(), m.GetName())) {
		keys = append(keys, c.ofRootShard(rs.Namespace, rs.Name)...)
	}
	return keys
}

// ofRootShard are the keys of the FrontProxies of a RootShard.
func (c *Controller) ofRootShard(namespace, rootShard string) []string {
	return controller.Keys(c.Indexes.FrontProxies, controller.RootShardIndex, controller.IndexValue(namespace, rootShard))
}

// mounting are the FrontProxies of a namespace whose pods mount the user's Secret name, or
// whose bundles are made of it.
func (c *Controller) mounting(namespace, name string) []string {
	return controller.Keys(c.Indexes.FrontProxies, controller.UsersSecretIndex, controller.IndexValue(namespace, name))
}
