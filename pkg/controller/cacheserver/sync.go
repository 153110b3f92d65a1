package cacheserver

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// Reconcile realizes a CacheServer and observes the result.
func (c *Controller) Reconcile(ctx context.Context, obj *operatorv1alpha1.CacheServer, status *operatorv1alpha1.CacheServerStatus) error {
	// The release of its setup's roll (docs/kcp-versions.md, "Upgrading a setup").
	obj = kinds.CacheServerRelease.Built(c.Indexes, c.Host.Deployments, obj)
	cs := cacheserver.CacheServer{CacheServer: obj}
	wrote, err := c.realize(ctx, cs)
	c.Applied(obj, wrote, err)
	if err != nil {
		return err
	}
	certs := cs.Certificates()
	c.Observe(obj, status, len(certs), c.Host.PendingCertificates(certs), cs.DeploymentName())
	return c.advanceRotations(ctx, cs, status, wrote) // rotation (docs/rotation.md)
}

// Plan is what a reconcile of the CacheServer obj writes to the host cluster
// (controller.Plan); it belongs to no RootShard.
func (c *Controller) Plan(ctx context.Context, obj *operatorv1alpha1.CacheServer, _ *operatorv1alpha1.RootShard) (*hostcluster.Plan, error) {
	// Built as Reconcile builds it (a tag the preview gave it is kept, as a pinned one).
	obj = kinds.CacheServerRelease.Built(c.Indexes, c.Host.Deployments, obj)
	cs := cacheserver.CacheServer{CacheServer: obj}
	return controller.Plan(ctx, func(ctx context.Context) (int, error) { return c.realize(ctx, cs) })
}

// realize applies the cache server's PKI, its Service, its client CA and kubeconfig once
// cert-manager issued what they are made of, and its Deployment once what it mounts exists.
// It returns how many objects it wrote.
func (c *Controller) realize(ctx context.Context, cs cacheserver.CacheServer) (int, error) {
	w := c.Host.Writes(ctx)
	objs := cs.PKI()
	w.Certificates(objs.Issuers, objs.Certificates)
	w.Services(cs.Service())
	w.BuiltSecrets(c.secrets(ctx, cs))
	w.DeploymentWhenMounted(cs.Namespace, cs.DeploymentName(), cs.Mounts(), cs.Deployment)
	return w.Done()
}

// secrets are the client CA, kubeconfig and reference Secrets, as far as cert-manager has issued what
// they are made of; their events bring the CacheServer back when it has.
func (c *Controller) secrets(ctx context.Context, cs cacheserver.CacheServer) ([]*corev1ac.SecretApplyConfiguration, error) {
	caCert, err := c.caCertificate(ctx, cs)
	if err != nil || caCert == nil {
		return nil, err
	}
	out := []*corev1ac.SecretApplyConfiguration{cs.ClientCA(caCert)}
	client, err := c.Host.Issued(cs.Namespace, cs.ClientName(), corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
	if err != nil || client == nil {
		return out, err
	}
	kubeconfig, err := cs.Kubeconfig(caCert, client.Data["tls.crt"], client.Data["tls.key"])
	if err != nil {
		return nil, err
	}
	// Its reference Secret: the same credentials, for a root shard or shard elsewhere.
	return append(out, kubeconfig, reference.ForCacheServer(cs, caCert, reference.FromSecret(client))), nil
}

// caCertificate is the cache server's CA certificate alone, or nil before it is issued.
func (c *Controller) caCertificate(ctx context.Context, cs cacheserver.CacheServer) ([]byte, error) {
	if cs.CASecret() == cs.CAName() {
		// Every live slot: both CAs while one rotates (docs/rotation.md).
		return c.liveCA(cs)
	}
	return c.Host.UsersCA(ctx, cs.Namespace, cs.CASecret())
}

// Watches are what a CacheServer's reconcile reads.
func (c *Controller) Watches() controller.Watches {
	return controller.Watches{
		Kinds: []controller.Reference{
			// The last RootShard of a namespace may take the shared bootstrap PKI with it; and
			// the roll of the RootShard that names it gives it its release.
			{Kind: kinds.RootShard, Keys: c.ofRootShard},
		},
		Host: []controller.HostResource{controller.Secrets, controller.Services, controller.Deployments,
			controller.DisruptionBudgets, controller.Certificates, controller.Issuers},
		Users: c.users,
	}
}

// users are the CacheServers a host object concerns besides its owner: every CacheServer of
// its namespace that uses the bootstrap PKI it belongs to.
func (c *Controller) users(m metav1.Object) []string {
	if certificates.IsBootstrap(m.GetLabels()) {
		return c.bootstrapUsers(m)
	}
	return nil
}

// ofRootShard are the CacheServers a RootShard concerns: the users of the bootstrap PKI of
// its namespace, and the one its spec.cache.ref names.
func (c *Controller) ofRootShard(m metav1.Object) []string {
	keys := c.bootstrapUsers(m)
	if rs, ok := m.(*operatorv1alpha1.RootShard); ok && rs.Spec.Cache != nil && rs.Spec.Cache.Reference != nil {
		keys = append(keys, rs.Namespace+"/"+rs.Spec.Cache.Reference.Name)
	}
	return keys
}

// bootstrapUsers are the CacheServers of an object's namespace without spec.certificates.
func (c *Controller) bootstrapUsers(m metav1.Object) []string {
	return c.Keys(controller.BootstrapIndex, m.GetNamespace())
}
