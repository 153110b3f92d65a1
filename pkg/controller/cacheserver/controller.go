// Package cacheserver realizes CacheServers in the host cluster: their standalone CA, their
// certificates, the kubeconfig root shards and shards reach them with, and the cache-server
// Deployment and Service, and reports back through status.
package cacheserver

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	operatorinformers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
)

// Finalizer keeps a CacheServer until what the controller created for it is gone.
const Finalizer = "operator.kcp.io/cacheserver-cleanup"

// Kind is the CacheServer to the shared controller code.
var Kind = controller.Kind[*operatorv1alpha1.CacheServer, operatorv1alpha1.CacheServerStatus]{
	Name: cacheserver.Kind, Noun: "cache server", Finalizer: Finalizer,
	Informer: func(i operatorinformers.Interface) cache.SharedIndexInformer { return i.CacheServers().Informer() },
	Lister: func(l controller.Listers, ns string) controller.Getter[*operatorv1alpha1.CacheServer] {
		return l.CacheServers.CacheServers(ns)
	},
	Client: func(c clientset.Interface, ns string) controller.Client[*operatorv1alpha1.CacheServer] {
		return c.OperatorV1alpha1().CacheServers(ns)
	},
	Status: func(cs *operatorv1alpha1.CacheServer) *operatorv1alpha1.CacheServerStatus { return &cs.Status },
	Common: func(s *operatorv1alpha1.CacheServerStatus) controller.Common {
		return controller.SetupStatus(&s.Phase, &s.ObservedGeneration, &s.Conditions)
	},
}

// Controller reconciles CacheServers.
type Controller struct {
	*controller.Base[*operatorv1alpha1.CacheServer, operatorv1alpha1.CacheServerStatus]
}

// New returns a CacheServer controller reading our kinds and the host cluster's objects from the
// informers inf, and writing to the host cluster through host.
func New(client clientset.Interface, inf controller.Informers, host *hostcluster.Host, recorder record.EventRecorder) (*Controller, error) {
	c := newController(controller.NewBase(Kind, client, controller.Indexes{}, host, recorder))
	return c, c.Watch(inf, c.sync, c.watches)
}

// newController is the controller of base. The namespace bootstrap PKI goes with the last
// object that uses it.
func newController(base *controller.Base[*operatorv1alpha1.CacheServer, operatorv1alpha1.CacheServerStatus]) *Controller {
	c := &Controller{Base: base}
	c.Cleanup = c.ReleasingBootstrap(func(cs *operatorv1alpha1.CacheServer) bool { return cs.Spec.Certificates == nil })
	return c
}

// watches are what a CacheServer's reconcile reads.
func (c *Controller) watches(inf controller.Informers) controller.Watches {
	ops := inf.Ours.Operator().V1alpha1()
	return controller.Watches{
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
	return controller.Keys(c.Indexes.CacheServers, controller.BootstrapIndex, m.GetNamespace())
}

// mounting are the CacheServers of a namespace whose pods mount the user's Secret name.
func (c *Controller) mounting(namespace, name string) []string {
	return controller.Keys(c.Indexes.CacheServers, controller.UsersSecretIndex, controller.IndexValue(namespace, name))
}
