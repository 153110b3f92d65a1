package shard

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// sync brings the host cluster in line with one Shard and reports back in its status.
func (c *Controller) sync(ctx context.Context, key string) error {
	l := c.lifecycle()
	return l.Sync(ctx, key, l.RequiringCertManager(c.reconcile))
}

// lifecycle is the Shard's finalizer, status and deletion.
func (c *Controller) lifecycle() controller.Lifecycle[*operatorv1alpha1.Shard, operatorv1alpha1.ShardStatus] {
	opts := metav1.UpdateOptions{FieldManager: controller.FieldManager}
	return controller.Lifecycle[*operatorv1alpha1.Shard, operatorv1alpha1.ShardStatus]{
		Kind: shard.Kind, Noun: "shard", Finalizer: Finalizer,
		Get: func(ns, name string) (*operatorv1alpha1.Shard, error) { return c.shards.Shards(ns).Get(name) },
		Update: func(ctx context.Context, s *operatorv1alpha1.Shard) (*operatorv1alpha1.Shard, error) {
			return c.client.OperatorV1alpha1().Shards(s.Namespace).Update(ctx, s, opts)
		},
		UpdateStatus: func(ctx context.Context, s *operatorv1alpha1.Shard) (*operatorv1alpha1.Shard, error) {
			return c.client.OperatorV1alpha1().Shards(s.Namespace).UpdateStatus(ctx, s, opts)
		},
		Status:  func(s *operatorv1alpha1.Shard) *operatorv1alpha1.ShardStatus { return &s.Status },
		Release: c.deregister,
		Common: func(s *operatorv1alpha1.ShardStatus) controller.Common {
			return controller.Common{Phase: &s.Phase, ObservedGeneration: &s.ObservedGeneration, Conditions: &s.Conditions}
		},
		Host: c.host, Recorder: c.recorder,
	}
}

// reconcile realizes a Shard once its RootShard exists, and observes the result.
func (c *Controller) reconcile(ctx context.Context, s *operatorv1alpha1.Shard, status *operatorv1alpha1.ShardStatus) error {
	l := c.lifecycle()
	if s.Spec.RootShard.SecretRef != nil {
		return c.reconcileJoined(ctx, s, status)
	}
	rs, err := c.rootShards.RootShards(s.Namespace).Get(rootShardName(s))
	if apierrors.IsNotFound(err) {
		// Kubernetes is eventually consistent: the RootShard may come later.
		l.RootShardMissing(s, status, rootShardName(s))
		l.ObserveKcp(ctx, s, status, c.loop, false, nil)
		return nil
	}
	if err != nil {
		return err
	}
	l.SetRootShard(s, status, true, fmt.Sprintf("RootShard reference is valid: RootShard %q exists", rs.Name))

	k, ok, err := c.realizeAndObserve(ctx, s, status, rs, nil)
	if err != nil || !ok {
		return err
	}
	// After the host side, which kcp's answer never holds up.
	l.ObserveKcp(ctx, s, status, c.loop, meta.IsStatusConditionTrue(status.Conditions, operatorv1alpha1.ConditionAvailable),
		c.kcpReady(s, rs))
	l.ObserveManagedEtcd(ctx, s, status, c.loop, k.Etcd)
	return nil
}

// reconcileJoined realizes a Shard whose spec.rootShard.secretRef names a copy of a
// shard-join Secret: from the RootShard the copy describes, with local copies of its CAs.
// Until the copy is there and well-formed, ReferenceValid says why, and nothing is
// realized or removed. The server has no identity toward that root shard's kcp, so KcpReady
// is not observed.
func (c *Controller) reconcileJoined(ctx context.Context, s *operatorv1alpha1.Shard, status *operatorv1alpha1.ShardStatus) error {
	l := c.lifecycle()
	joined, err := c.host.Join(ctx, shard.Kind, s.Namespace, s.Name, s.Spec.RootShard.SecretRef, reference.ShardJoin)
	if _, problem := controller.ReferenceProblem(err); err == nil || problem {
		l.SetJoinedRootShard(s, status, s.Spec.RootShard.SecretRef.Name, err)
	}
	if err != nil {
		return l.ReferenceInvalid(s, status, err)
	}
	k, ok, err := c.realizeAndObserve(ctx, s, status, joined.RootShard, joined)
	if err != nil || !ok {
		return err
	}
	meta.RemoveStatusCondition(&status.Conditions, operatorv1alpha1.ConditionKcpReady)
	l.ObserveManagedEtcd(ctx, s, status, c.loop, k.Etcd)
	return nil
}

// realizeAndObserve realizes the Shard of rs (joined, when rs is the RootShard of a copy)
// and observes the host side. It returns false when the Shard's own cache reference is not
// usable yet: ReferenceValid says why.
func (c *Controller) realizeAndObserve(ctx context.Context, s *operatorv1alpha1.Shard, status *operatorv1alpha1.ShardStatus,
	rs *operatorv1alpha1.RootShard, joined *reference.Joined) (kcp.Server, bool, error) {
	l := c.lifecycle()
	k := shard.Server(s, rs)
	cache, err := c.host.CacheKubeconfig(ctx, k)
	if err != nil {
		return k, false, l.ReferenceInvalid(s, status, err)
	}
	vw, vwReason, vwMessage, err := controller.ShardVirtualWorkspace(c.virtualWorkspaces, shard.Kind, s.Namespace, s.Name, &s.Spec.CommonShardSpec)
	if err != nil {
		return k, false, err
	}
	wrote, err := c.realize(ctx, s, rs, joined, cache, controller.VirtualWorkspaceEndpoint(vw))
	l.Applied(s, wrote, err)
	if err != nil {
		return k, false, err
	}
	l.SetCondition(s, status, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionTrue, controller.ReasonReferencesFound, "every referenced object exists")
	if vwReason != "" {
		l.SetVirtualWorkspaceMissing(s, status, vwReason, vwMessage)
	}
	if k.Cache != nil {
		if _, err := c.cacheServers.CacheServers(s.Namespace).Get(k.Cache.Name); apierrors.IsNotFound(err) {
			l.SetCondition(s, status, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionFalse, controller.ReasonCacheServerNotFound,
				fmt.Sprintf("CacheServer %q does not exist in namespace %q", k.Cache.Name, s.Namespace))
		}
	}
	certs := shard.Certificates(s, rs)
	l.Observe(s, status, len(certs), c.host.PendingCertificates(certs), k.DeploymentName())
	return k, true, nil
}

// realize applies the Shard's certificates, its kubeconfig toward the root shard, and its
// kcp server, and returns how many objects it wrote.
func (c *Controller) realize(ctx context.Context, s *operatorv1alpha1.Shard, rs *operatorv1alpha1.RootShard, joined *reference.Joined,
	cache *corev1ac.SecretApplyConfiguration, vw *kcp.VirtualWorkspaceEndpoint) (int, error) {
	wrote := 0
	if joined != nil {
		n, err := c.host.ApplyJoined(ctx, *joined)
		wrote += n
		if err != nil {
			return wrote, err
		}
	}
	if cache != nil {
		w, err := c.host.SecretApplier.ApplyIfChanged(ctx, cache)
		wrote += controller.Count(w)
		if err != nil {
			return wrote, err
		}
	}
	n, err := c.host.ApplyCertificates(ctx, nil, shard.Certificates(s, rs))
	wrote += n
	if err != nil {
		return wrote, err
	}
	toRoot, err := shard.ClientKubeconfig(s, rs)
	if err != nil {
		return wrote, err
	}
	w, err := c.host.SecretApplier.ApplyIfChanged(ctx, toRoot)
	if err != nil {
		return wrote, err
	}
	if w {
		wrote++
	}
	n, err = c.realizeBundles(ctx, s, rs)
	wrote += n
	if err != nil {
		return wrote, err
	}
	k := shard.Server(s, rs)
	k.VirtualWorkspace = vw
	// A joined shard has the other shards' keys not at hand: it verifies the tokens it
	// issued itself.
	if joined == nil {
		k.ServiceAccountIssuers = c.host.ServiceAccountIssuers(rs, c.indexes.ShardsOf(rs.Namespace, rs.Name))
	}
	n, err = c.host.RealizeServer(ctx, k)
	return wrote + n, err
}

// realizeBundles writes the Shard's own CA bundles, for its clientCABundleRef and
// caBundleSecretRef, on top of its RootShard's merged ones. Until the RootShard wrote those,
// there is nothing to add to: their events bring the Shard back, and its Deployment waits
// for its bundles.
func (c *Controller) realizeBundles(ctx context.Context, s *operatorv1alpha1.Shard, rs *operatorv1alpha1.RootShard) (int, error) {
	var bundles []*corev1ac.SecretApplyConfiguration
	for _, b := range []struct {
		ref       *corev1.LocalObjectReference
		rootShard string
		build     func(s *operatorv1alpha1.Shard, rootShard, extra []byte) *corev1ac.SecretApplyConfiguration
	}{
		{s.Spec.ClientCABundleRef, kcp.MergedClientCAName(rs), shard.MergedClientCA},
		{s.Spec.CABundleSecretRef, rootshard.MergedCABundleName(rs), shard.MergedCABundle},
	} {
		if b.ref == nil {
			continue
		}
		base, found, err := c.host.OwnCABundle(s.Namespace, b.rootShard)
		if err != nil || !found {
			return 0, err
		}
		extra, err := c.host.UsersCABundle(ctx, s.Namespace, b.ref)
		if err != nil {
			return 0, err
		}
		bundles = append(bundles, b.build(s, base, extra))
	}
	return c.host.ApplyBundles(ctx, bundles...)
}
