// Package cacheserver realizes CacheServers in the host cluster: their standalone CA, their
// certificates, the kubeconfig root shards and shards reach them with, and the cache-server
// Deployment and Service, and reports back through status.
package cacheserver

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
)

// Controller reconciles CacheServers.
type Controller struct {
	controller.Base[*operatorv1alpha1.CacheServer, operatorv1alpha1.CacheServerStatus]
}

// New sets up a CacheServer controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.CacheServer)

// Watches are what a CacheServer's reconcile reads.
func (c *Controller) Watches() controller.Watches {
	return controller.Watches{
		Kinds: []controller.Reference{
			// The last RootShard of a namespace may take the shared bootstrap PKI with it.
			{Kind: kinds.RootShard, Keys: c.bootstrapUsers},
		},
		Host: []controller.HostResource{controller.Secrets, controller.Services, controller.Deployments,
			controller.DisruptionBudgets, controller.Certificates, controller.Issuers},
		Owners: c.owners,
		// The CacheServers whose pods mount a user's Secret.
		Mounting: c.Naming(controller.UsersSecretIndex),
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
	return c.Keys(controller.BootstrapIndex, m.GetNamespace())
}
