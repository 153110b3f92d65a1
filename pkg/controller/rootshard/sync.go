package rootshard

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// sync brings the host cluster in line with one RootShard and reports back in its status.
func (c *Controller) sync(ctx context.Context, key string) error {
	l := c.lifecycle()
	return l.Sync(ctx, key, l.RequiringCertManager(c.reconcile))
}

// lifecycle is the RootShard's finalizer, status and deletion. The namespace bootstrap PKI
// goes with the last object that uses it.
func (c *Controller) lifecycle() controller.Lifecycle[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus] {
	opts := metav1.UpdateOptions{FieldManager: controller.FieldManager}
	return controller.Lifecycle[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus]{
		Kind: rootshard.Kind, Noun: "root shard", Finalizer: Finalizer,
		Get: func(ns, name string) (*operatorv1alpha1.RootShard, error) {
			return c.rootShards.RootShards(ns).Get(name)
		},
		Update: func(ctx context.Context, rs *operatorv1alpha1.RootShard) (*operatorv1alpha1.RootShard, error) {
			return c.client.OperatorV1alpha1().RootShards(rs.Namespace).Update(ctx, rs, opts)
		},
		UpdateStatus: func(ctx context.Context, rs *operatorv1alpha1.RootShard) (*operatorv1alpha1.RootShard, error) {
			return c.client.OperatorV1alpha1().RootShards(rs.Namespace).UpdateStatus(ctx, rs, opts)
		},
		Status: func(rs *operatorv1alpha1.RootShard) *operatorv1alpha1.RootShardStatus { return &rs.Status },
		Common: func(s *operatorv1alpha1.RootShardStatus) controller.Common {
			return controller.Common{Phase: &s.Phase, ObservedGeneration: &s.ObservedGeneration, Conditions: &s.Conditions}
		},
		Cleanup: func(ctx context.Context, rs *operatorv1alpha1.RootShard) error {
			if rs.Spec.Certificates != nil {
				return nil
			}
			return c.bootstrap().Release(ctx, rs.Namespace, rootshard.Kind, rs.Name)
		},
		Host: c.host, Recorder: c.recorder,
	}
}

// reconcile realizes a RootShard and observes the result.
func (c *Controller) reconcile(ctx context.Context, rs *operatorv1alpha1.RootShard, status *operatorv1alpha1.RootShardStatus) error {
	desired := rootshard.BuildPKI(rs)
	// The internal front proxy's certificates are the RootShard's too: CertificatesReady
	// counts them.
	desired.Certificates = append(desired.Certificates, frontproxy.RootShardProxy{RootShard: rs}.Certificates()...)
	vw, vwReason, vwMessage, err := controller.ShardVirtualWorkspace(c.virtualWorkspaces, rootshard.Kind, rs.Namespace, rs.Name, &rs.Spec.CommonShardSpec)
	if err != nil {
		return err
	}
	l := c.lifecycle()
	// A copy of a cache-client Secret that cannot be used holds back the kcp server alone
	// (its Deployment waits for the kubeconfig), not the PKI: ReferenceValid says why.
	cache, cacheErr := c.host.CacheKubeconfig(ctx, rootshard.Server(rs))
	var refErr *reference.Error
	if cacheErr != nil && !errors.As(cacheErr, &refErr) {
		return cacheErr
	}
	wrote, err := c.realize(ctx, rs, desired, cache, controller.VirtualWorkspaceEndpoint(vw))
	l.Applied(rs, wrote, err)
	if err != nil {
		return err
	}
	*status = c.observe(rs, desired, refErr)
	// Rotation (docs/rotation.md): each running rotation of the CAs takes a step.
	if err := c.advanceRotations(ctx, rs, status, wrote); err != nil {
		return err
	}
	if vwReason != "" {
		l.SetVirtualWorkspaceMissing(rs, status, vwReason, vwMessage)
	}
	// After the host side, which kcp's answer never holds up.
	l.ObserveKcp(ctx, rs, status, c.loop, meta.IsStatusConditionTrue(status.Conditions, operatorv1alpha1.ConditionAvailable),
		func(ctx context.Context) controller.KcpResult {
			return controller.KcpReadyz(ctx, func() (*rest.Config, error) { return c.host.Kcp.RootShard(rs, "") })
		})
	l.ObserveManagedEtcd(ctx, rs, status, c.loop, rootshard.Etcd(rs))
	return nil
}

// bootstrap is the namespace bootstrap PKI as this controller sees its users.
func (c *Controller) bootstrap() controller.Bootstrap {
	return controller.Bootstrap{Host: c.host, Indexes: c.indexes}
}

// realize applies everything a RootShard needs, in the order it depends on: the PKI, the CA
// bundles and the reference Secrets, then the kcp server's kubeconfigs, Service and Deployment,
// then its internal front proxy. It returns how many
// objects it wrote.
func (c *Controller) realize(ctx context.Context, rs *operatorv1alpha1.RootShard, desired rootshard.PKI,
	cache *corev1ac.SecretApplyConfiguration, vw *kcp.VirtualWorkspaceEndpoint) (int, error) {
	wrote, err := c.host.ApplyCertificates(ctx, desired.Issuers, desired.Certificates)
	if err != nil {
		return wrote, err
	}
	if cache != nil {
		w, err := c.host.SecretApplier.ApplyIfChanged(ctx, cache)
		wrote += controller.Count(w)
		if err != nil {
			return wrote, err
		}
	}
	bundles, issued, err := c.caBundles(ctx, rs)
	if err != nil {
		return wrote, err
	}
	// Until cert-manager issued the CAs, the bundles would be empty; the CA Secrets' events
	// bring the RootShard back.
	if issued {
		refs, err := c.references(ctx, rs, bundles)
		if err != nil {
			return wrote, err
		}
		trust, err := c.trustBundles(rs) // rotation (docs/rotation.md)
		if err != nil {
			return wrote, err
		}
		w, err := c.host.ApplyBundles(ctx, append(append([]*corev1ac.SecretApplyConfiguration{rootshard.MergedClientCA(rs, bundles), rootshard.MergedCABundle(rs, bundles)}, refs...), trust...)...)
		wrote += w
		if err != nil {
			return wrote, err
		}
	}
	n, err := c.applyEtcdTrust(ctx, rs)
	wrote += n
	if err != nil {
		return wrote, err
	}
	k := rootshard.Server(rs)
	k.VirtualWorkspace = vw
	k.ServiceAccountIssuers = c.host.ServiceAccountIssuers(rs, c.indexes.ShardsOf(rs.Namespace, rs.Name))
	n, err = c.host.RealizeServer(ctx, k)
	wrote += n
	if err != nil {
		return wrote, err
	}
	n, err = c.realizeProxy(ctx, rs, bundles, issued)
	return wrote + n, err
}

// caBundles reads the CA certificates the merged bundles are made of. issued is false until
// cert-manager has issued the RootShard's CAs.
func (c *Controller) caBundles(ctx context.Context, rs *operatorv1alpha1.RootShard) (rootshard.CABundles, bool, error) {
	var b rootshard.CABundles
	for ca, dst := range map[pki.CA]*[]byte{pki.ServerCA: &b.ServerCA, pki.ClientCA: &b.ClientCA, pki.FrontProxyClientCA: &b.FrontProxyClientCA} {
		// Every live slot: both CAs while one rotates (docs/rotation.md).
		live, issued, err := c.liveCA(rs, ca)
		if err != nil || !issued {
			return b, false, err
		}
		*dst = live
	}
	// The users' extra CAs are not labelled as ours, so they are read, not cached.
	for ref, dst := range map[*corev1.LocalObjectReference]*[]byte{rs.Spec.CABundleSecretRef: &b.ExtraServerCAs, rs.Spec.ClientCABundleRef: &b.ExtraClientCAs} {
		if ref == nil {
			continue
		}
		s, err := c.host.Kube.CoreV1().Secrets(rs.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return b, false, fmt.Errorf("reading the CA bundle Secret %s: %w", ref.Name, err)
		}
		*dst = s.Data["tls.crt"]
	}
	return b, true, nil
}

// applyEtcdTrust writes the Secrets of the RootShard's etcd CAs alone, which its and its
// shards' managed etcd clusters trust, once cert-manager issued the CAs; the CA Secrets'
// events bring the RootShard back, and a renewed CA rewrites them.
func (c *Controller) applyEtcdTrust(ctx context.Context, rs *operatorv1alpha1.RootShard) (int, error) {
	var cas [2][]byte
	for i, ca := range []pki.CA{pki.EtcdClientCA, pki.EtcdPeerCA} {
		// Every live slot: both CAs while one rotates (docs/rotation.md).
		live, issued, err := c.liveCA(rs, ca)
		if err != nil || !issued {
			return 0, err
		}
		cas[i] = live
	}
	wrote := 0
	for _, secret := range rootshard.EtcdTrust(rs, cas[0], cas[1]) {
		w, err := c.host.SecretApplier.ApplyIfChanged(ctx, secret)
		if err != nil {
			return wrote, err
		}
		wrote += controller.Count(w)
	}
	return wrote, nil
}
