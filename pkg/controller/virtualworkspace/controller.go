// Package virtualworkspace realizes VirtualWorkspaces in the host cluster: their certificates,
// signed by their target's RootShard CAs, their kubeconfigs toward the target, and the
// virtual workspace server's Deployment and Service, and reports back through status. A
// VirtualWorkspace whose target does not exist yet says so, and heals when it appears.
package virtualworkspace

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
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
	"github.com/kcp-setups/apiserver/pkg/resources/virtualworkspace"
)

// Finalizer keeps a VirtualWorkspace until what the controller created for it is gone.
const Finalizer = "operator.kcp.io/virtualworkspace-cleanup"

// Kind is the VirtualWorkspace to the shared controller code.
var Kind = controller.Kind[*operatorv1alpha1.VirtualWorkspace, operatorv1alpha1.VirtualWorkspaceStatus]{
	Name: virtualworkspace.Kind, Noun: "virtual workspace", Finalizer: Finalizer,
	Informer: func(i operatorinformers.Interface) cache.SharedIndexInformer { return i.VirtualWorkspaces().Informer() },
	Lister: func(l controller.Listers, ns string) controller.Getter[*operatorv1alpha1.VirtualWorkspace] {
		return l.VirtualWorkspaces.VirtualWorkspaces(ns)
	},
	Client: func(c clientset.Interface, ns string) controller.Client[*operatorv1alpha1.VirtualWorkspace] {
		return c.OperatorV1alpha1().VirtualWorkspaces(ns)
	},
	Status: func(vw *operatorv1alpha1.VirtualWorkspace) *operatorv1alpha1.VirtualWorkspaceStatus {
		return &vw.Status
	},
	Common: func(s *operatorv1alpha1.VirtualWorkspaceStatus) controller.Common {
		return controller.SetupStatus(&s.Phase, &s.ObservedGeneration, &s.Conditions)
	},
}

// Controller reconciles VirtualWorkspaces.
type Controller struct {
	*controller.Base[*operatorv1alpha1.VirtualWorkspace, operatorv1alpha1.VirtualWorkspaceStatus]
}

// New returns a VirtualWorkspace controller reading our kinds and the host cluster's objects from the
// informers inf, and writing to the host cluster through host.
func New(client clientset.Interface, inf controller.Informers, host *hostcluster.Host, recorder record.EventRecorder) (*Controller, error) {
	c := newController(controller.NewBase(Kind, client, controller.Indexes{}, host, recorder))
	return c, c.Watch(inf, c.sync, c.watches)
}

func newController(base *controller.Base[*operatorv1alpha1.VirtualWorkspace, operatorv1alpha1.VirtualWorkspaceStatus]) *Controller {
	return &Controller{Base: base}
}

// watches are what a VirtualWorkspace's reconcile reads.
func (c *Controller) watches(inf controller.Informers) controller.Watches {
	ops := inf.Ours.Operator().V1alpha1()
	return controller.Watches{
		Kinds: []controller.Reference{
			// A target appearing heals its VirtualWorkspaces; its spec changes theirs (image,
			// addresses, cache, bundles).
			{Informer: ops.RootShards().Informer(), Keys: func(m metav1.Object) []string { return c.ofRootShard(m.GetNamespace(), m.GetName()) }},
			{Informer: ops.Shards().Informer(), Keys: func(m metav1.Object) []string { return c.ofShard(m.GetNamespace(), m.GetName()) }},
			{Informer: ops.CacheServers().Informer(), Keys: c.inNamespace},
		},
		// What the VirtualWorkspace owns, and what its target owns that it mounts (CAs,
		// bundles, the cache's kubeconfig).
		Host: []controller.HostResource{controller.Secrets, controller.Services, controller.Deployments,
			controller.DisruptionBudgets, controller.Certificates},
		Owners:   c.owners,
		Mounting: c.mounting,
	}
}

// owners are the VirtualWorkspaces a host object concerns: its owner, the VirtualWorkspaces
// of the RootShard or Shard that owns it, or every VirtualWorkspace of the namespace for a
// CacheServer's.
func (c *Controller) owners(m metav1.Object) []string {
	if key := controller.OwnerKey(m, virtualworkspace.Kind); key != nil {
		return key
	}
	l := m.GetLabels()
	switch {
	case l[pki.OwnerLabel(rootshard.Kind)] != "":
		return c.ofRootShard(m.GetNamespace(), l[pki.OwnerLabel(rootshard.Kind)])
	case l[pki.OwnerLabel(shard.Kind)] != "":
		return c.ofShard(m.GetNamespace(), l[pki.OwnerLabel(shard.Kind)])
	case l[pki.OwnerLabel(cacheserver.Kind)] != "":
		return c.inNamespace(m)
	}
	return nil
}

// ofRootShard are the VirtualWorkspaces whose PKI is a RootShard's: those that serve it, and
// those that serve one of its Shards.
func (c *Controller) ofRootShard(namespace, rootShard string) []string {
	candidates := controller.Indexed[*operatorv1alpha1.VirtualWorkspace](c.Indexes.VirtualWorkspaces, controller.TargetIndex,
		controller.TargetValue(namespace, rootshard.Kind, rootShard))
	for _, s := range c.Indexes.ShardsOf(namespace, rootShard) {
		candidates = append(candidates, controller.Indexed[*operatorv1alpha1.VirtualWorkspace](c.Indexes.VirtualWorkspaces, controller.TargetIndex,
			controller.TargetValue(namespace, shard.Kind, s.Name))...)
	}
	return controller.Matching(candidates, func(vw *operatorv1alpha1.VirtualWorkspace) bool {
		t := vw.Spec.Target
		if t.RootShardRef != nil {
			return t.RootShardRef.Name == rootShard
		}
		if t.ShardRef == nil {
			return false
		}
		s, err := c.Shards.Shards(namespace).Get(t.ShardRef.Name)
		return err == nil && controller.ShardRootShard(s) == rootShard
	})
}

// ofShard are the VirtualWorkspaces that serve a Shard.
func (c *Controller) ofShard(namespace, name string) []string {
	return controller.Keys(c.Indexes.VirtualWorkspaces, controller.TargetIndex, controller.TargetValue(namespace, shard.Kind, name))
}

// inNamespace are every VirtualWorkspace of an object's namespace.
func (c *Controller) inNamespace(m metav1.Object) []string {
	return controller.InNamespace(c.Indexes.VirtualWorkspaces, m.GetNamespace())
}

// mounting are the VirtualWorkspaces of a namespace whose pods mount the user's Secret name,
// or whose client CA bundle is made of it.
func (c *Controller) mounting(namespace, name string) []string {
	return controller.Keys(c.Indexes.VirtualWorkspaces, controller.UsersSecretIndex, controller.IndexValue(namespace, name))
}
