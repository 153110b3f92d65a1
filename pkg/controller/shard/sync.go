package shard

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// Reconcile realizes a Shard once its RootShard exists, and observes the result.
func (c *Controller) Reconcile(ctx context.Context, s *operatorv1alpha1.Shard, status *operatorv1alpha1.ShardStatus) error {
	// The release of its setup's roll (docs/kcp-versions.md, "Upgrading a setup").
	s = kinds.ShardRelease.Built(c.Indexes, c.Host.Deployments, s)
	if s.Spec.RootShard.SecretRef != nil {
		return c.reconcileJoined(ctx, s, status)
	}
	if l := s.Spec.RootShard.Link; l != nil {
		return c.reconcileLinked(ctx, s, status, l.SecretRef.Name)
	}
	rs, err := kinds.RootShard.Lister(c.Indexes, s.Namespace).Get(rootShardName(s))
	if apierrors.IsNotFound(err) {
		// Kubernetes is eventually consistent: the RootShard may come later.
		c.RootShardMissing(s, status, rootShardName(s))
		c.ObserveKcp(ctx, s, status, c.Loop, false, nil)
		return nil
	}
	if err != nil {
		return err
	}
	c.SetRootShard(s, status, true, fmt.Sprintf("RootShard reference is valid: RootShard %q exists", rs.Name))

	k, ok, err := c.realizeAndObserve(ctx, s, status, rs, nil)
	if err != nil || !ok {
		return err
	}
	// After the host side, which kcp's answer never holds up.
	c.ObserveKcp(ctx, s, status, c.Loop, meta.IsStatusConditionTrue(status.Conditions, operatorv1alpha1.ConditionAvailable),
		c.kcpReady(s, rs))
	kinds.ObserveManagedEtcd(ctx, c.Lifecycle, s, status, c.Loop, k.Etcd, shardEtcdStatus)
	return nil
}

// reconcileJoined realizes a Shard whose spec.rootShard.secretRef names a copy of a
// shard-join Secret: from the RootShard the copy describes, with local copies of its CAs.
// Until the copy is there and well-formed, ReferenceValid says why, and nothing is
// realized or removed. The server has no identity toward that root shard's kcp, so KcpReady
// is not observed.
func (c *Controller) reconcileJoined(ctx context.Context, s *operatorv1alpha1.Shard, status *operatorv1alpha1.ShardStatus) error {
	joined, err := c.Host.Join(ctx, shard.Kind, s.Namespace, s.Name, s.Spec.RootShard.SecretRef, reference.ShardJoin)
	if _, problem := hostcluster.ReferenceProblem(err); err == nil || problem {
		c.SetJoinedRootShard(s, status, s.Spec.RootShard.SecretRef.Name, err)
	}
	if err != nil {
		return c.ReferenceInvalid(s, status, err)
	}
	return c.realizeJoined(ctx, s, status, joined)
}

// reconcileLinked realizes a Shard whose spec.rootShard.link names the bootstrap Secret
// bootstrap: as a joined one, from the keyless data the link received (its bundles Secret),
// its certificates signed over the link (link.Join). Until the bootstrap and the bundles are
// there and well-formed, ReferenceValid says why, and nothing is realized or removed.
func (c *Controller) reconcileLinked(ctx context.Context, s *operatorv1alpha1.Shard, status *operatorv1alpha1.ShardStatus, bootstrap string) error {
	joined, err := c.Host.JoinLinked(ctx, shard.Kind, s.Namespace, s.Name, bootstrap, reference.ShardJoin)
	if _, problem := hostcluster.ReferenceProblem(err); err == nil || problem {
		c.SetLinkedRootShard(s, status, bootstrap, err)
	}
	if ok, err := c.Linked(s, status, bootstrap, err); !ok {
		return err
	}
	return c.realizeJoined(ctx, s, status, joined)
}

// realizeJoined realizes a Shard joined from a copy or over a link, and observes it: the
// server does not observe a kcp it has no identity toward.
func (c *Controller) realizeJoined(ctx context.Context, s *operatorv1alpha1.Shard, status *operatorv1alpha1.ShardStatus, joined *reference.Joined) error {
	k, ok, err := c.realizeAndObserve(ctx, s, status, joined.RootShard, joined)
	if err != nil || !ok {
		return err
	}
	meta.RemoveStatusCondition(&status.Conditions, operatorv1alpha1.ConditionKcpReady)
	kinds.ObserveManagedEtcd(ctx, c.Lifecycle, s, status, c.Loop, k.Etcd, shardEtcdStatus)
	return nil
}

// realizeAndObserve realizes the Shard of rs (joined, when rs is the RootShard of a copy)
// and observes the host side. It returns false when the Shard's own cache reference is not
// usable yet: ReferenceValid says why.
func (c *Controller) realizeAndObserve(ctx context.Context, s *operatorv1alpha1.Shard, status *operatorv1alpha1.ShardStatus,
	rs *operatorv1alpha1.RootShard, joined *reference.Joined) (kcp.Server, bool, error) {
	k := shard.Server(s, rs)
	cache, err := c.Host.CacheKubeconfig(ctx, k)
	if err != nil {
		return k, false, c.ReferenceInvalid(s, status, err)
	}
	vw, vwReason, vwMessage, err := kinds.KcpServerVirtualWorkspace(c.Indexes, shard.Kind, s.Namespace, s.Name, &s.Spec.CommonShardSpec)
	if err != nil {
		return k, false, err
	}
	restore, restored := kinds.EtcdRestore(c.Lifecycle, c.Indexes, s, s.Status.Conditions, c.Loop, k.Etcd, true)
	wrote, err := c.realize(ctx, s, rs, joined, cache, kinds.VirtualWorkspaceEndpoint(vw), restore)
	c.Applied(s, wrote, err)
	if err != nil {
		return k, false, err
	}
	c.SetCondition(s, status, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionTrue, operatorv1alpha1.ReasonReferencesFound, "every referenced object exists")
	if vwReason != "" {
		c.SetVirtualWorkspaceMissing(s, status, vwReason, vwMessage)
	}
	if k.Cache != nil {
		if _, err := kinds.CacheServer.Lister(c.Indexes, s.Namespace).Get(k.Cache.Name); apierrors.IsNotFound(err) {
			c.SetCondition(s, status, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionFalse, operatorv1alpha1.ReasonCacheServerNotFound,
				fmt.Sprintf("CacheServer %q does not exist in namespace %q", k.Cache.Name, s.Namespace))
		}
	}
	certs := link.ShardCertificates(s, rs)
	c.Observe(s, status, len(certs), c.Host.PendingCertificates(certs), k.DeploymentName())
	restored(status)
	return k, true, nil
}

// Plan is what a reconcile of the Shard s writes to the host cluster (controller.Plan), with
// rs in place of its stored RootShard when set; a joined or linked Shard's RootShard is the
// one its copy or its link describes.
func (c *Controller) Plan(ctx context.Context, s *operatorv1alpha1.Shard, rs *operatorv1alpha1.RootShard) (*hostcluster.Plan, error) {
	// Built as Reconcile builds it (a tag the preview gave it is kept, as a pinned one).
	s = kinds.ShardRelease.Built(c.Indexes, c.Host.Deployments, s)
	var joined *reference.Joined
	var err error
	switch {
	case s.Spec.RootShard.SecretRef != nil:
		joined, err = c.Host.Join(ctx, shard.Kind, s.Namespace, s.Name, s.Spec.RootShard.SecretRef, reference.ShardJoin)
	case s.Spec.RootShard.Link != nil:
		joined, err = c.Host.JoinLinked(ctx, shard.Kind, s.Namespace, s.Name, s.Spec.RootShard.Link.SecretRef.Name, reference.ShardJoin)
	case rs == nil:
		rs, err = kinds.RootShard.Lister(c.Indexes, s.Namespace).Get(rootShardName(s))
	}
	if err != nil {
		return nil, err
	}
	if joined != nil {
		rs = joined.RootShard
	}
	cache, err := c.Host.CacheKubeconfig(ctx, shard.Server(s, rs))
	if err != nil {
		return nil, err
	}
	vw, _, _, err := kinds.KcpServerVirtualWorkspace(c.Indexes, shard.Kind, s.Namespace, s.Name, &s.Spec.CommonShardSpec)
	if err != nil {
		return nil, err
	}
	restore, _ := kinds.EtcdRestore(c.Lifecycle, c.Indexes, s, s.Status.Conditions, nil, shard.Server(s, rs).Etcd, false)
	return controller.Plan(ctx, func(ctx context.Context) (int, error) {
		return c.realize(ctx, s, rs, joined, cache, kinds.VirtualWorkspaceEndpoint(vw), restore)
	})
}

// realize applies the Shard's local CAs when joined, its cache kubeconfig, its certificates,
// its kubeconfig toward the root shard, its CA bundles and its kcp server, and returns how
// many objects it wrote.
func (c *Controller) realize(ctx context.Context, s *operatorv1alpha1.Shard, rs *operatorv1alpha1.RootShard, joined *reference.Joined,
	cache *corev1ac.SecretApplyConfiguration, vw *kcp.VirtualWorkspaceEndpoint, restore kinds.EtcdRestoreStep) (int, error) {
	w := c.Host.Writes(ctx)
	w.Joined(joined)
	w.Secrets(cache)
	w.Certificates(nil, link.ShardCertificates(s, rs))
	w.Secret(shard.ClientKubeconfig(s, rs))
	// Its own CA bundles, on top of its RootShard's merged ones.
	w.ExtraBundles(s.Namespace,
		hostcluster.ExtraBundle{Extra: s.Spec.ClientCABundleRef, Base: kcp.MergedClientCAName(rs),
			Build: func(base, extra []byte) *corev1ac.SecretApplyConfiguration {
				return shard.MergedClientCA(s, base, extra)
			}},
		hostcluster.ExtraBundle{Extra: s.Spec.CABundleSecretRef, Base: rootshard.MergedCABundleName(rs),
			Build: func(base, extra []byte) *corev1ac.SecretApplyConfiguration {
				return shard.MergedCABundle(s, base, extra)
			}})
	// The shard's live service-account keys, once its RootShard's service-account CA was
	// rotated.
	w.Secret(c.Host.ServiceAccountTrust(rs, shard.Kind, s.Name))
	k := shard.Server(s, rs)
	k.VirtualWorkspace = vw
	// A joined shard has the other shards' keys not at hand: it verifies the tokens it
	// issued itself.
	if joined == nil {
		k.ServiceAccountIssuers = c.Host.ServiceAccountIssuers(rs, kinds.ShardsOf(c.Indexes, rs.Namespace, rs.Name))
	}
	restore.Apply(k.Etcd)
	w.KcpServer(k)
	return w.Done()
}

// Watches are what a Shard's reconcile reads.
func (c *Controller) Watches() controller.Watches {
	return controller.Watches{
		Kinds: []controller.Reference{
			// A Shard joining or leaving changes the service-account keys its siblings verify.
			{Kind: kinds.Shard, Keys: c.siblings, Membership: true},
			// A RootShard appearing heals its Shards; its spec changes theirs (external hostname).
			{Kind: kinds.RootShard, Keys: func(m metav1.Object) []string { return c.shardsOf(m.GetNamespace(), m.GetName()) }},
			{Kind: kinds.CacheServer, Keys: c.InNamespace},
			// The VirtualWorkspace it names appearing heals it; its address is in its flags.
			{Kind: kinds.VirtualWorkspace, Keys: c.NamingObject(controller.VirtualWorkspaceIndex)},
		},
		// What the Shard owns, and what its RootShard owns that it mounts (CAs, bundles).
		Host: []controller.HostResource{controller.Secrets, controller.Services, controller.Deployments, controller.StatefulSets,
			controller.DisruptionBudgets, controller.Certificates},
		Users:    c.users,
		Mounting: c.mounting,
	}
}

// users are the Shards a host object concerns besides its owner: the siblings of the Shard
// whose service-account key it is, which verify it too; every Shard of the RootShard that owns
// it; or every Shard of its namespace for a CacheServer's kubeconfig, which they mount.
func (c *Controller) users(m metav1.Object) []string {
	if name := m.GetLabels()[pki.OwnerLabel(shard.Kind)]; name != "" {
		if controller.ShardServiceAccountSecret(m, shard.Kind) == "" {
			return nil
		}
		if s, err := kinds.Shard.Lister(c.Indexes, m.GetNamespace()).Get(name); err == nil {
			return c.siblings(s)
		}
		return nil
	}
	if rs := m.GetLabels()[pki.OwnerLabel(rootshard.Kind)]; rs != "" {
		return c.shardsOf(m.GetNamespace(), rs)
	}
	if m.GetLabels()[pki.OwnerLabel(cacheserver.Kind)] != "" {
		return c.InNamespace(m)
	}
	return nil
}

// shardsOf are the keys of the Shards of a RootShard.
func (c *Controller) shardsOf(namespace, rootShard string) []string {
	return kinds.ShardKeysOf(c.Indexes, namespace, rootShard)
}

// siblings are the keys of the other Shards of a Shard's RootShard.
func (c *Controller) siblings(m metav1.Object) []string {
	s, ok := m.(*operatorv1alpha1.Shard)
	if !ok || rootShardName(s) == "" {
		return nil
	}
	self := s.Namespace + "/" + s.Name
	return slices.DeleteFunc(c.shardsOf(s.Namespace, rootShardName(s)), func(k string) bool { return k == self })
}

func rootShardName(s *operatorv1alpha1.Shard) string { return controller.ShardRootShard(s) }

// mounting are the Shards of a namespace whose pods mount the Secret name: among those whose
// spec names it and those of the RootShards whose spec does.
func (c *Controller) mounting(namespace, name string) []string {
	value := controller.IndexValue(namespace, name)
	candidates := controller.Indexed[*operatorv1alpha1.Shard](kinds.Shard.Cache(c.Indexes), controller.UsersSecretIndex, value)
	for _, rs := range controller.Indexed[*operatorv1alpha1.RootShard](kinds.RootShard.Cache(c.Indexes), controller.UsersSecretIndex, value) {
		candidates = append(candidates, kinds.ShardsOf(c.Indexes, namespace, rs.Name)...)
	}
	return controller.Matching(candidates, func(s *operatorv1alpha1.Shard) bool {
		rs, err := kinds.RootShard.Lister(c.Indexes, namespace).Get(rootShardName(s))
		if s.Spec.RootShard.SecretRef != nil || s.Spec.RootShard.Link != nil {
			// Names alone: what the pods mount does not depend on the copy's content.
			rs, err = reference.JoinedRootShard(shard.Kind, namespace, s.Name), nil
		}
		// A user's CA bundle Secret is not mounted, but the Shard's bundle is made of it.
		return err == nil && (slices.Contains(shard.Server(s, rs).MountedSecrets(), name) ||
			slices.Contains(controller.BundleSources(s.Spec.CABundleSecretRef, s.Spec.ClientCABundleRef), name))
	})
}

// EtcdClaims are the volume claims of the Shard's managed etcd (controller.EtcdOwner).
func (c *Controller) EtcdClaims(s *operatorv1alpha1.Shard) []string { return shard.EtcdClaimNames(s) }

// shardEtcdStatus is where a Shard's status says how its managed etcd is.
func shardEtcdStatus(s *operatorv1alpha1.ShardStatus) **operatorv1alpha1.ManagedEtcdStatus {
	return &s.Etcd
}
