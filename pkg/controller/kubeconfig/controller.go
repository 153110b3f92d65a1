// Package kubeconfig realizes declared Kubeconfigs in the host cluster: a cert-manager
// Certificate of the declared identity, signed by the target RootShard's front-proxy-client
// CA, and, once it is issued, the Secret spec.secretRef.name with a kubeconfig file toward
// the target. A target named by a copy of a RootShard's kubeconfig-issuer Secret
// (rootShardSecretRef) is that RootShard joined from the copy (reference.Join): the
// Kubeconfig writes the local copy of its front-proxy-client CA, behind an Issuer, and its
// server CA bundle, and its certificate is signed by them. When cert-manager renews the
// certificate, the Secret is written again. With spec.authorization, it also binds the ClusterRoles in kcp (authorization.go), through the
// target's RootShard as the server's own identity, and removes the bindings before the
// Secret when the Kubeconfig goes. It watches nothing in kcp: a failure there is retried
// with the queue's backoff. It reports back through status.
package kubeconfig

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// Controller reconciles Kubeconfigs. Their phases (Provisioning, Ready, Failed) are not a
// setup's: reconcile sets them, and deletion shows as Available=False with reason Deleting.
type Controller struct {
	controller.Base[*operatorv1alpha1.Kubeconfig, operatorv1alpha1.KubeconfigStatus]
	// rbacFor builds the RBAC client of a kcp workspace; nil is the real one (newRBAC).
	rbacFor RBACFor
}

// New sets up a Kubeconfig controller reading our kinds and the host cluster's objects from the
// informers of its deps, and writing to the host cluster through them.
var New = controller.Setup[Controller](kinds.Kubeconfig)

// Watches are what a Kubeconfig's reconcile reads.
func (c *Controller) Watches() controller.Watches {
	return controller.Watches{
		Kinds: []controller.Reference{
			// A target that appears heals ReferenceValid; one that changes changes the kubeconfig.
			{Kind: kinds.RootShard, Keys: func(m metav1.Object) []string { return c.ofRootShard(m.GetNamespace(), m.GetName()) }},
			{Kind: kinds.Shard, Keys: func(m metav1.Object) []string {
				return c.targeting(m.GetNamespace(), kubeconfig.ShardTarget, m.GetName())
			}},
			{Kind: kinds.FrontProxy, Keys: func(m metav1.Object) []string {
				return c.targeting(m.GetNamespace(), kubeconfig.FrontProxyTarget, m.GetName())
			}},
		},
		// cert-manager's Secret, issued and renewed, and the kubeconfig Secret; and the
		// RootShard's server CA bundle that every kubeconfig of it trusts. For a RootShard
		// of a reference Secret, the local CA Secrets and Issuer it signs with.
		Host:   []controller.HostResource{controller.Secrets, controller.Certificates, controller.Issuers},
		Owners: c.owners,
		// The copy of a kubeconfig-issuer Secret appearing, fixed or renewed.
		Referencing: func(namespace, name string) []string {
			return c.targeting(namespace, kubeconfig.RootShardSecretTarget, name)
		},
	}
}

// owners are the Kubeconfigs a host object concerns: its owner, or, for a RootShard's merged
// CA bundle, every Kubeconfig toward that RootShard or its Shards and FrontProxies.
func (c *Controller) owners(m metav1.Object) []string {
	if key := controller.OwnerKey(m, kubeconfig.Kind); key != nil {
		return key
	}
	if rs := m.GetLabels()[pki.OwnerLabel(rootshard.Kind)]; rs != "" &&
		m.GetName() == rootshard.MergedCABundleName(&operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: rs}}) {
		return c.ofRootShard(m.GetNamespace(), rs)
	}
	// A FrontProxy's own CA bundle, which the Kubeconfigs toward it trust.
	if fp := m.GetLabels()[pki.OwnerLabel(frontproxy.Kind)]; fp != "" && m.GetLabels()[pki.LabelComponent] == "merged-ca-bundle" {
		return c.targeting(m.GetNamespace(), kubeconfig.FrontProxyTarget, fp)
	}
	return nil
}

// targeting are the keys of the Kubeconfigs of a namespace whose target is kind/name.
func (c *Controller) targeting(namespace, kind, name string) []string {
	return c.Keys(controller.TargetIndex, controller.TargetValue(namespace, kind, name))
}

// ofRootShard are the keys of the Kubeconfigs whose credentials a RootShard signs: toward
// the RootShard itself, or toward one of its Shards or FrontProxies.
func (c *Controller) ofRootShard(namespace, rootShard string) []string {
	keys := c.targeting(namespace, kubeconfig.RootShardTarget, rootShard)
	for _, s := range kinds.ShardsOf(c.Indexes, namespace, rootShard) {
		keys = append(keys, c.targeting(namespace, kubeconfig.ShardTarget, s.Name)...)
	}
	for _, fp := range kinds.FrontProxiesOf(c.Indexes, namespace, rootShard) {
		keys = append(keys, c.targeting(namespace, kubeconfig.FrontProxyTarget, fp.Name)...)
	}
	return keys
}
