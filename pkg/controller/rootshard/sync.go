package rootshard

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// Reconcile realizes a RootShard and observes the result.
func (c *Controller) Reconcile(ctx context.Context, obj *operatorv1alpha1.RootShard, status *operatorv1alpha1.RootShardStatus) error {
	// The release of its setup's roll (docs/kcp-versions.md, "Upgrading a setup"), which
	// its own spec.version drives (roll, from obj as it is).
	rs := kinds.RootShardRelease.Built(c.Indexes, c.Host.Deployments, obj)
	in, err := c.inputs(ctx, rs)
	if err != nil {
		return err
	}
	desired, refErr, vwReason, vwMessage := in.desired, in.refErr, in.vwReason, in.vwMessage
	restore, restored := kinds.EtcdRestore(c.Lifecycle, c.Indexes, rs, obj.Status.Conditions, c.Loop, rootshard.Etcd(rs), true)
	wrote, err := c.realize(ctx, rs, desired, in.cache, kinds.VirtualWorkspaceEndpoint(in.vw), restore)
	c.Applied(rs, wrote, err)
	if err != nil {
		return err
	}
	*status = c.observe(rs, desired, refErr)
	// Rotation (docs/rotation.md): each running rotation of the CAs takes a step.
	if err := c.advanceRotations(ctx, rs, status, wrote); err != nil {
		return err
	}
	if vwReason != "" {
		c.SetVirtualWorkspaceMissing(rs, status, vwReason, vwMessage)
	}
	// After the host side, which kcp's answer never holds up.
	c.ObserveKcp(ctx, rs, status, c.Loop, meta.IsStatusConditionTrue(status.Conditions, operatorv1alpha1.ConditionAvailable),
		func(ctx context.Context) kcphealth.Result {
			return kcphealth.Readyz(ctx, func() (*rest.Config, error) { return c.Host.Kcp.RootShard(rs, "") })
		})
	kinds.ObserveManagedEtcd(ctx, c.Lifecycle, rs, status, c.Loop, rootshard.Etcd(rs),
		func(s *operatorv1alpha1.RootShardStatus) **operatorv1alpha1.ManagedEtcdStatus { return &s.Etcd })
	restored(status)
	// Last, from what was observed: the roll of its setup to spec.version.
	c.roll(obj, status)
	return c.maintain(ctx, obj, status)
}

// inputs are what a RootShard's realize is given, read before it: its PKI, its cache
// kubeconfig (with the problem of a copy that cannot be used, refErr), and the
// VirtualWorkspace it names (with why it cannot serve it yet).
type inputs struct {
	desired             rootshard.PKI
	cache               *corev1ac.SecretApplyConfiguration
	refErr              *reference.Error
	vw                  *operatorv1alpha1.VirtualWorkspace
	vwReason, vwMessage string
}

func (c *Controller) inputs(ctx context.Context, rs *operatorv1alpha1.RootShard) (inputs, error) {
	desired := rootshard.BuildPKI(rs)
	// The internal front proxy's certificates are the RootShard's too: CertificatesReady
	// counts them.
	desired.Certificates = append(desired.Certificates, frontproxy.RootShardProxy{RootShard: rs}.Certificates()...)
	// The link PKI (docs/links.md), only while a Link names the RootShard.
	if len(kinds.LinksOf(c.Indexes, rs.Namespace, rs.Name)) > 0 {
		links := link.RootShardPKI(rs)
		desired.Issuers = append(desired.Issuers, links.Issuers...)
		desired.Certificates = append(desired.Certificates, links.Certificates...)
	}
	in := inputs{desired: desired}
	var err error
	in.vw, in.vwReason, in.vwMessage, err = kinds.KcpServerVirtualWorkspace(c.Indexes, rootshard.Kind, rs.Namespace, rs.Name, &rs.Spec.CommonShardSpec)
	if err != nil {
		return in, err
	}
	// A copy of a cache-client Secret that cannot be used holds back the kcp server alone
	// (its Deployment waits for the kubeconfig), not the PKI: ReferenceValid says why.
	cache, cacheErr := c.Host.CacheKubeconfig(ctx, rootshard.Server(rs))
	if cacheErr != nil && !errors.As(cacheErr, &in.refErr) {
		return in, cacheErr
	}
	in.cache = cache
	return in, nil
}

// Plan is what a reconcile of rs writes to the host cluster (controller.Plan); the
// RootShard is its own setup's, so a substitute for it is not asked for.
func (c *Controller) Plan(ctx context.Context, rs *operatorv1alpha1.RootShard, _ *operatorv1alpha1.RootShard) (*hostcluster.Plan, error) {
	// Built as Reconcile builds it: a tag the preview gave it is kept, as a pinned one.
	rs = kinds.RootShardRelease.Built(c.Indexes, c.Host.Deployments, rs)
	in, err := c.inputs(ctx, rs)
	if err != nil {
		return nil, err
	}
	restore, _ := kinds.EtcdRestore(c.Lifecycle, c.Indexes, rs, rs.Status.Conditions, nil, rootshard.Etcd(rs), false)
	return controller.Plan(ctx, func(ctx context.Context) (int, error) {
		return c.realize(ctx, rs, in.desired, in.cache, kinds.VirtualWorkspaceEndpoint(in.vw), restore)
	})
}

// realize applies everything a RootShard needs, in the order it depends on: the PKI, the CA
// bundles and the reference Secrets, then the kcp server's kubeconfigs, Service and Deployment,
// then its internal front proxy. It returns how many objects it wrote.
func (c *Controller) realize(ctx context.Context, rs *operatorv1alpha1.RootShard, desired rootshard.PKI,
	cache *corev1ac.SecretApplyConfiguration, vw *kcp.VirtualWorkspaceEndpoint, restore kinds.EtcdRestoreStep) (int, error) {
	w := c.Host.Writes(ctx)
	w.Certificates(desired.Issuers, desired.Certificates)
	w.Secrets(cache)
	// Until cert-manager issued the CAs, the bundles would be empty (nil); the CA Secrets'
	// events bring the RootShard back.
	bundles, err := c.caBundles(ctx, rs)
	if w.Built(err) && bundles != nil {
		w.Secrets(rootshard.MergedClientCA(rs, *bundles), rootshard.MergedCABundle(rs, *bundles))
		w.BuiltSecrets(c.references(ctx, rs, *bundles))
		w.BuiltSecrets(c.trustBundles(rs)) // rotation (docs/rotation.md)
	}
	w.BuiltSecrets(c.etcdTrust(rs))
	// The root shard's live service-account keys, once its service-account CA was rotated.
	w.Secret(c.Host.ServiceAccountTrust(rs, rootshard.Kind, rs.Name))
	k := rootshard.Server(rs)
	k.VirtualWorkspace = vw
	k.ServiceAccountIssuers = c.Host.ServiceAccountIssuers(rs, kinds.ShardsOf(c.Indexes, rs.Namespace, rs.Name))
	restore.Apply(k.Etcd)
	w.KcpServer(k)
	c.realizeProxy(w, rs, bundles)
	return w.Done()
}

// caBundles reads the CA certificates the merged bundles are made of: nil until cert-manager
// has issued the RootShard's CAs.
func (c *Controller) caBundles(ctx context.Context, rs *operatorv1alpha1.RootShard) (*rootshard.CABundles, error) {
	var b rootshard.CABundles
	for _, ca := range []struct {
		ca  pki.CA
		dst *[]byte
	}{{pki.ServerCA, &b.ServerCA}, {pki.ClientCA, &b.ClientCA}, {pki.FrontProxyClientCA, &b.FrontProxyClientCA}} {
		// Every live slot: both CAs while one rotates (docs/rotation.md).
		live, issued, err := c.liveCA(rs, ca.ca)
		if err != nil || !issued {
			return nil, err
		}
		*ca.dst = live
	}
	// The users' extra CAs: one that does not exist is ReferenceValid=False, as on every kind.
	var err error
	if b.ExtraServerCAs, err = c.Host.UsersCABundle(ctx, rs.Namespace, rs.Spec.CABundleSecretRef); err != nil {
		return nil, err
	}
	if b.ExtraClientCAs, err = c.Host.UsersCABundle(ctx, rs.Namespace, rs.Spec.ClientCABundleRef); err != nil {
		return nil, err
	}
	return &b, nil
}

// etcdTrust are the Secrets of the RootShard's etcd CAs alone, which its and its shards'
// managed etcd clusters trust, once cert-manager issued the CAs; the CA Secrets' events bring
// the RootShard back, and a renewed CA rewrites them.
func (c *Controller) etcdTrust(rs *operatorv1alpha1.RootShard) ([]*corev1ac.SecretApplyConfiguration, error) {
	var cas [2][]byte
	for i, ca := range []pki.CA{pki.EtcdClientCA, pki.EtcdPeerCA} {
		// Every live slot: both CAs while one rotates (docs/rotation.md).
		live, issued, err := c.liveCA(rs, ca)
		if err != nil || !issued {
			return nil, err
		}
		cas[i] = live
	}
	return rootshard.EtcdTrust(rs, cas[0], cas[1]), nil
}

// Watches are what a RootShard's reconcile reads.
func (c *Controller) Watches() controller.Watches {
	return controller.Watches{
		Kinds: []controller.Reference{
			// A Shard joining or leaving changes status.shards, and the service-account keys
			// the root shard verifies.
			{Kind: kinds.Shard, Keys: c.rootShardOfShard},
			// A CacheServer appearing heals a reference.
			{Kind: kinds.CacheServer, Keys: c.InNamespace},
			// So does the VirtualWorkspace it names, whose address its flags carry; and a
			// VirtualWorkspace of its PKI or a FrontProxy becoming available lets a CA
			// rotation go on (advanceRotations).
			{Kind: kinds.VirtualWorkspace, Keys: c.ofVirtualWorkspace},
			{Kind: kinds.FrontProxy, Keys: c.rootShardOfFrontProxy},
			// A Link appearing or going adds or leaves its link PKI, and what its remote
			// reports of its consumers (status.consumers) is the RootShard's to act on.
			{Kind: kinds.Link, Keys: rootShardOfLink},
		},
		// What the controller owns: status follows it within seconds.
		Host: []controller.HostResource{controller.Secrets, controller.ConfigMaps, controller.Services, controller.Deployments, controller.StatefulSets,
			controller.DisruptionBudgets, controller.Certificates, controller.Issuers},
		Users: c.users,
	}
}

// users are the RootShards a host object concerns besides its owner: every RootShard of its
// namespace for an object of the shared bootstrap PKI.
func (c *Controller) users(m metav1.Object) []string {
	// A Shard's service-account key is verified by its root shard.
	if name := controller.ShardServiceAccountSecret(m, shard.Kind); name != "" {
		if s, err := kinds.Shard.Lister(c.Indexes, m.GetNamespace()).Get(name); err == nil {
			return c.rootShardOfShard(s)
		}
		return nil
	}
	// A member's Deployment rolling moves the roll of its setup on.
	if keys := c.ofMemberDeployment(m); keys != nil {
		return keys
	}
	// A CacheServer's kubeconfig is mounted by the RootShards that use it.
	if certificates.IsBootstrap(m.GetLabels()) || m.GetLabels()[pki.OwnerLabel(cacheserver.Kind)] != "" {
		return c.InNamespace(m)
	}
	return nil
}

// ofVirtualWorkspace are the RootShards a VirtualWorkspace concerns: those that name it
// (spec.kcpVirtualWorkspace), and the one whose PKI it is issued from, its target's.
func (c *Controller) ofVirtualWorkspace(m metav1.Object) []string {
	keys := c.NamingObject(controller.VirtualWorkspaceIndex)(m)
	vw, ok := m.(*operatorv1alpha1.VirtualWorkspace)
	if !ok {
		return keys
	}
	switch t := vw.Spec.Target; {
	case t.RootShardRef != nil:
		keys = append(keys, vw.Namespace+"/"+t.RootShardRef.Name)
	case t.ShardRef != nil:
		if s, err := kinds.Shard.Lister(c.Indexes, vw.Namespace).Get(t.ShardRef.Name); err == nil {
			keys = append(keys, c.rootShardOfShard(s)...)
		}
	}
	return keys
}

// rootShardOfLink is the RootShard a Link names.
func rootShardOfLink(m metav1.Object) []string {
	if l, ok := m.(*operatorv1alpha1.Link); ok && l.Spec.RootShardRef.Name != "" {
		return []string{l.Namespace + "/" + l.Spec.RootShardRef.Name}
	}
	return nil
}

// rootShardOfFrontProxy is the RootShard a FrontProxy points at.
func (c *Controller) rootShardOfFrontProxy(m metav1.Object) []string {
	fp, ok := m.(*operatorv1alpha1.FrontProxy)
	if !ok || fp.Spec.RootShard.Reference == nil {
		return nil
	}
	return []string{fp.Namespace + "/" + fp.Spec.RootShard.Reference.Name}
}

// rootShardOfShard is the RootShard a Shard points at.
func (c *Controller) rootShardOfShard(m metav1.Object) []string {
	s, ok := m.(*operatorv1alpha1.Shard)
	if !ok || s.Spec.RootShard.Reference == nil {
		return nil
	}
	return []string{s.Namespace + "/" + s.Spec.RootShard.Reference.Name}
}

// EtcdClaims are the volume claims of the RootShard's managed etcd, its snapshot volume's
// included (controller.EtcdOwner).
func (c *Controller) EtcdClaims(rs *operatorv1alpha1.RootShard) []string {
	return rootshard.Etcd(rs).VolumeClaimNames()
}
