// Package frontproxy realizes FrontProxies in the host cluster: their certificates, signed
// by their RootShard's CAs, their kubeconfig toward the shards, their path mappings, and the
// kcp-front-proxy Deployment and Service, and reports back through status.
package frontproxy

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// Controller reconciles FrontProxies.
type Controller struct {
	controller.Base[*operatorv1alpha1.FrontProxy, operatorv1alpha1.FrontProxyStatus]
}

// New sets up a FrontProxy controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.FrontProxy)

// Watches are what a FrontProxy's reconcile reads.
func (c *Controller) Watches() controller.Watches {
	return controller.Watches{
		Kinds: []controller.Reference{
			// A Shard joining or leaving changes the service-account keys the front proxy verifies.
			{Kind: kinds.Shard, Keys: c.ofShard, Membership: true},
			{Kind: kinds.RootShard, Keys: func(m metav1.Object) []string { return c.ofRootShard(m.GetNamespace(), m.GetName()) }},
			// The root shard's VirtualWorkspace serves /services/.
			{Kind: kinds.VirtualWorkspace, Keys: c.ofVirtualWorkspace},
		},
		// A copy of a front-proxy-join Secret appearing or changing (a CA rotated and copied
		// again) re-realizes the FrontProxies that name it.
		Referencing: c.Naming(controller.ReferenceSecretIndex),
		Host: []controller.HostResource{controller.Secrets, controller.ConfigMaps, controller.Services,
			controller.Deployments, controller.DisruptionBudgets, controller.Certificates},
		Owners: c.owners,
		// The FrontProxies whose pods mount a user's Secret, or whose bundles are made of it.
		Mounting: c.Naming(controller.UsersSecretIndex),
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
		if s, err := kinds.Shard.Lister(c.Indexes, m.GetNamespace()).Get(name); err == nil {
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
	for _, rs := range controller.Indexed[*operatorv1alpha1.RootShard](kinds.RootShard.Cache(c.Indexes), controller.VirtualWorkspaceIndex,
		controller.IndexValue(m.GetNamespace(), m.GetName())) {
		keys = append(keys, c.ofRootShard(rs.Namespace, rs.Name)...)
	}
	return keys
}

// ofRootShard are the keys of the FrontProxies of a RootShard.
func (c *Controller) ofRootShard(namespace, rootShard string) []string {
	return c.Keys(controller.RootShardIndex, controller.IndexValue(namespace, rootShard))
}
