// Package rootshard realizes RootShards in the host cluster: their PKI as cert-manager
// objects now, their workloads next, and reports back through status.
package rootshard

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
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// Finalizer keeps a RootShard until what the controller created for it is gone.
const Finalizer = "operator.kcp.io/rootshard-cleanup"

// Kind is the RootShard to the shared controller code.
var Kind = controller.Kind[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus]{
	Name: rootshard.Kind, Noun: "root shard", Finalizer: Finalizer,
	Informer: func(i operatorinformers.Interface) cache.SharedIndexInformer { return i.RootShards().Informer() },
	Lister: func(l controller.Listers, ns string) controller.Getter[*operatorv1alpha1.RootShard] {
		return l.RootShards.RootShards(ns)
	},
	Client: func(c clientset.Interface, ns string) controller.Client[*operatorv1alpha1.RootShard] {
		return c.OperatorV1alpha1().RootShards(ns)
	},
	Status: func(rs *operatorv1alpha1.RootShard) *operatorv1alpha1.RootShardStatus { return &rs.Status },
	Common: func(s *operatorv1alpha1.RootShardStatus) controller.Common {
		return controller.SetupStatus(&s.Phase, &s.ObservedGeneration, &s.Conditions)
	},
}

// Controller reconciles RootShards.
type Controller struct {
	*controller.Base[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus]
}

// New returns a RootShard controller reading our kinds and the host cluster's objects from the
// informers inf, and writing to the host cluster through host.
func New(client clientset.Interface, inf controller.Informers, host *hostcluster.Host, recorder record.EventRecorder) (*Controller, error) {
	c := newController(controller.NewBase(Kind, client, controller.Indexes{}, host, recorder))
	return c, c.Watch(inf, c.sync, c.watches)
}

// newController is the controller of base. The namespace bootstrap PKI goes with the last
// object that uses it.
func newController(base *controller.Base[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus]) *Controller {
	c := &Controller{Base: base}
	c.Cleanup = c.ReleasingBootstrap(func(rs *operatorv1alpha1.RootShard) bool { return rs.Spec.Certificates == nil })
	return c
}

// watches are what a RootShard's reconcile reads.
func (c *Controller) watches(inf controller.Informers) controller.Watches {
	ops := inf.Ours.Operator().V1alpha1()
	return controller.Watches{
		Kinds: []controller.Reference{
			// A Shard joining or leaving changes status.shards, and the service-account keys
			// the root shard verifies.
			{Informer: ops.Shards().Informer(), Keys: c.rootShardOfShard},
			// A CacheServer appearing heals a reference.
			{Informer: ops.CacheServers().Informer(), Keys: c.inNamespace},
			// So does the VirtualWorkspace it names, whose address its flags carry.
			{Informer: ops.VirtualWorkspaces().Informer(), Keys: c.namingVirtualWorkspace},
		},
		// A copy of a cache-client Secret appearing or changing heals or renews the
		// kubeconfig of the RootShards that name it.
		Referencing: func(namespace, name string) []string {
			return controller.Keys(c.Indexes.RootShards, controller.ReferenceSecretIndex, controller.IndexValue(namespace, name))
		},
		// What the controller owns: status follows it within seconds.
		Host: []controller.HostResource{controller.Secrets, controller.ConfigMaps, controller.Services, controller.Deployments, controller.StatefulSets,
			controller.DisruptionBudgets, controller.Certificates, controller.Issuers},
		Owners:   c.owners,
		Mounting: c.mounting,
	}
}

// owners are the RootShards a host object concerns: its owner by label, or every RootShard of
// its namespace for an object of the shared bootstrap PKI.
func (c *Controller) owners(m metav1.Object) []string {
	if key := controller.OwnerKey(m, rootshard.Kind); key != nil {
		return key
	}
	// A Shard's service-account key is verified by its root shard.
	if name := controller.ShardServiceAccountSecret(m, shard.Kind); name != "" {
		if s, err := c.Shards.Shards(m.GetNamespace()).Get(name); err == nil {
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

// namingVirtualWorkspace are the RootShards that name a VirtualWorkspace in
// spec.kcpVirtualWorkspace.
func (c *Controller) namingVirtualWorkspace(m metav1.Object) []string {
	return controller.Keys(c.Indexes.RootShards, controller.VirtualWorkspaceIndex, controller.IndexValue(m.GetNamespace(), m.GetName()))
}

// inNamespace are every RootShard of an object's namespace.
func (c *Controller) inNamespace(m metav1.Object) []string {
	return controller.InNamespace(c.Indexes.RootShards, m.GetNamespace())
}

// mounting are the RootShards of a namespace whose pods mount the Secret name, or whose
// merged bundles are made of it.
func (c *Controller) mounting(namespace, name string) []string {
	return controller.Keys(c.Indexes.RootShards, controller.UsersSecretIndex, controller.IndexValue(namespace, name))
}
