package frontproxy

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
	"github.com/kcp-setups/apiserver/pkg/resources/virtualworkspace"
)

// Reconcile realizes a FrontProxy once its RootShard exists, and observes the result.
func (c *Controller) Reconcile(ctx context.Context, fp *operatorv1alpha1.FrontProxy, status *operatorv1alpha1.FrontProxyStatus) error {
	// The release of its setup's roll (docs/kcp-versions.md, "Upgrading a setup").
	fp = kinds.FrontProxyRelease.Built(c.Indexes, c.Host.Deployments, fp)
	if fp.Spec.RootShard.SecretRef != nil {
		return c.reconcileJoined(ctx, fp, status)
	}
	if l := fp.Spec.RootShard.Link; l != nil {
		return c.reconcileLinked(ctx, fp, status, l.SecretRef.Name)
	}
	rsName := ""
	if fp.Spec.RootShard.Reference != nil {
		rsName = fp.Spec.RootShard.Reference.Name
	}
	rs, err := kinds.RootShard.Lister(c.Indexes, fp.Namespace).Get(rsName)
	if apierrors.IsNotFound(err) {
		c.RootShardMissing(fp, status, rsName)
		return nil
	}
	if err != nil {
		return err
	}
	c.SetRootShard(fp, status, true, fmt.Sprintf("RootShard reference is valid: RootShard %q exists", rs.Name))

	f, unmapped, err := c.frontProxy(fp, rs)
	if err != nil {
		return err
	}
	return c.realizeAndObserve(ctx, f, status, nil, unmapped)
}

// frontProxy is the front proxy fp of the RootShard rs of its namespace, and why a path
// mapping to a VirtualWorkspace is left out, if one is.
func (c *Controller) frontProxy(fp *operatorv1alpha1.FrontProxy, rs *operatorv1alpha1.RootShard) (frontproxy.FrontProxy, *unmappedVirtualWorkspace, error) {
	f := frontproxy.FrontProxy{FrontProxy: fp, RootShard: rs, ServiceAccountIssuers: c.Host.ServiceAccountIssuers(rs, kinds.ShardsOf(c.Indexes, rs.Namespace, rs.Name))}
	// /services/ goes to the root shard's VirtualWorkspace once it can serve the root shard;
	// until then the root shard reports why, and the path stays with the root shard.
	vw, _, _, err := kinds.KcpServerVirtualWorkspace(c.Indexes, rootshard.Kind, rs.Namespace, rs.Name, &rs.Spec.CommonShardSpec)
	if err != nil {
		return f, nil, err
	}
	if vw != nil {
		f.ServicesBackend = virtualworkspace.VirtualWorkspace{VirtualWorkspace: vw}.ServiceURL()
	}
	// A path mapped to a VirtualWorkspace goes to it once it serves rs or one of its Shards.
	var unmapped *unmappedVirtualWorkspace
	for _, m := range fp.Spec.AdditionalPathMappings {
		if m.VirtualWorkspaceRef == nil {
			continue
		}
		vw, reason, message, err := kinds.MappedVirtualWorkspace(c.Indexes, fp.Namespace, rs.Name, m.VirtualWorkspaceRef.Name)
		switch {
		case err != nil:
			return f, nil, err
		case vw == nil && unmapped == nil:
			unmapped = &unmappedVirtualWorkspace{reason: reason, message: fmt.Sprintf("path %s: %s", m.Path, message)}
		case vw != nil:
			if f.MappedVirtualWorkspaces == nil {
				f.MappedVirtualWorkspaces = map[string]string{}
			}
			f.MappedVirtualWorkspaces[vw.Name] = virtualworkspace.VirtualWorkspace{VirtualWorkspace: vw}.ServiceURL()
		}
	}
	return f, unmapped, nil
}

// unmappedVirtualWorkspace is why a path mapping to a VirtualWorkspace is left out: the
// reason and message of ReferenceValid=False.
type unmappedVirtualWorkspace struct{ reason, message string }

// unmappedWhenJoined is why a joined or linked FrontProxy leaves its path mappings to
// VirtualWorkspaces out, if it has one: its RootShard is not one of its namespace, and no
// VirtualWorkspace of its namespace serves it with its PKI.
func unmappedWhenJoined(fp *operatorv1alpha1.FrontProxy) *unmappedVirtualWorkspace {
	for _, m := range fp.Spec.AdditionalPathMappings {
		if m.VirtualWorkspaceRef != nil {
			return &unmappedVirtualWorkspace{reason: operatorv1alpha1.ReasonVirtualWorkspaceTargetMismatch, message: fmt.Sprintf(
				"path %s: a FrontProxy of a copied or linked RootShard maps no path to a VirtualWorkspace (VirtualWorkspace %q): the path is not routed",
				m.Path, m.VirtualWorkspaceRef.Name)}
		}
	}
	return nil
}

// Plan is what a reconcile of the FrontProxy fp writes to the host cluster
// (controller.Plan), with rs in place of its stored RootShard when set; a joined or linked
// FrontProxy's RootShard is the one its copy or its link describes.
func (c *Controller) Plan(ctx context.Context, fp *operatorv1alpha1.FrontProxy, rs *operatorv1alpha1.RootShard) (*hostcluster.Plan, error) {
	// Built as Reconcile builds it (a tag the preview gave it is kept, as a pinned one).
	fp = kinds.FrontProxyRelease.Built(c.Indexes, c.Host.Deployments, fp)
	var joined *reference.Joined
	var err error
	switch {
	case fp.Spec.RootShard.SecretRef != nil:
		joined, err = c.Host.Join(ctx, frontproxy.Kind, fp.Namespace, fp.Name, fp.Spec.RootShard.SecretRef, reference.FrontProxyJoin)
	case fp.Spec.RootShard.Link != nil:
		joined, err = c.Host.JoinLinked(ctx, frontproxy.Kind, fp.Namespace, fp.Name, fp.Spec.RootShard.Link.SecretRef.Name, reference.FrontProxyJoin)
	case rs == nil && fp.Spec.RootShard.Reference != nil:
		rs, err = kinds.RootShard.Lister(c.Indexes, fp.Namespace).Get(fp.Spec.RootShard.Reference.Name)
	}
	if err != nil {
		return nil, err
	}
	f := frontproxy.FrontProxy{FrontProxy: fp}
	switch {
	case joined != nil:
		f.RootShard = joined.RootShard
	case rs != nil:
		if f, _, err = c.frontProxy(fp, rs); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("spec.rootShard names no RootShard")
	}
	return controller.Plan(ctx, func(ctx context.Context) (int, error) { return c.realize(ctx, f, joined) })
}

// reconcileJoined realizes a FrontProxy whose spec.rootShard.secretRef names a copy of a
// front-proxy-join Secret: from the RootShard the copy describes, with local copies of its
// CAs; /services/ goes to that root shard. Until the copy is there and well-formed,
// ReferenceValid says why, and nothing is realized or removed.
func (c *Controller) reconcileJoined(ctx context.Context, fp *operatorv1alpha1.FrontProxy, status *operatorv1alpha1.FrontProxyStatus) error {
	joined, err := c.Host.Join(ctx, frontproxy.Kind, fp.Namespace, fp.Name, fp.Spec.RootShard.SecretRef, reference.FrontProxyJoin)
	if _, problem := hostcluster.ReferenceProblem(err); err == nil || problem {
		c.SetJoinedRootShard(fp, status, fp.Spec.RootShard.SecretRef.Name, err)
	}
	if err != nil {
		return c.ReferenceInvalid(fp, status, err)
	}
	return c.realizeAndObserve(ctx, frontproxy.FrontProxy{FrontProxy: fp, RootShard: joined.RootShard}, status, joined, unmappedWhenJoined(fp))
}

// reconcileLinked realizes a FrontProxy whose spec.rootShard.link names the bootstrap Secret
// bootstrap: as a joined one, from the keyless data the link received, its certificates
// signed over the link (link.Join). Until the bootstrap and the bundles are there and
// well-formed, ReferenceValid says why, and nothing is realized or removed.
func (c *Controller) reconcileLinked(ctx context.Context, fp *operatorv1alpha1.FrontProxy, status *operatorv1alpha1.FrontProxyStatus, bootstrap string) error {
	joined, err := c.Host.JoinLinked(ctx, frontproxy.Kind, fp.Namespace, fp.Name, bootstrap, reference.FrontProxyJoin)
	if _, problem := hostcluster.ReferenceProblem(err); err == nil || problem {
		c.SetLinkedRootShard(fp, status, bootstrap, err)
	}
	if ok, err := c.Linked(fp, status, bootstrap, err); !ok {
		return err
	}
	return c.realizeAndObserve(ctx, frontproxy.FrontProxy{FrontProxy: fp, RootShard: joined.RootShard}, status, joined, unmappedWhenJoined(fp))
}

// realizeAndObserve realizes the front proxy f (with the local CAs of a copy, when joined)
// and observes the host side; ReferenceValid says why a path mapping to a VirtualWorkspace
// is left out (unmapped), if one is.
func (c *Controller) realizeAndObserve(ctx context.Context, f frontproxy.FrontProxy, status *operatorv1alpha1.FrontProxyStatus,
	joined *reference.Joined, unmapped *unmappedVirtualWorkspace) error {
	wrote, err := c.realize(ctx, f, joined)
	c.Applied(f.FrontProxy, wrote, err)
	if err != nil {
		return err
	}
	if unmapped != nil {
		c.SetVirtualWorkspaceMissing(f.FrontProxy, status, unmapped.reason, unmapped.message)
	} else {
		c.SetCondition(f.FrontProxy, status, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionTrue, operatorv1alpha1.ReasonReferencesFound, "every referenced object exists")
	}
	certs := f.Certificates()
	c.Observe(f.FrontProxy, status, len(certs), c.Host.PendingCertificates(certs), f.DeploymentName())
	return nil
}

// realize applies the front proxy's local CAs when joined, its certificates, CA bundles,
// kubeconfig, path mappings, Service and Deployment, and returns how many objects it wrote.
// The Deployment is created once what it mounts exists, and rolls when that changes.
func (c *Controller) realize(ctx context.Context, f frontproxy.FrontProxy, joined *reference.Joined) (int, error) {
	w := c.Host.Writes(ctx)
	w.Joined(joined)
	w.Certificates(nil, f.Certificates())
	// Its own CA bundles, on top of its RootShard's merged ones.
	w.ExtraBundles(f.Namespace,
		hostcluster.ExtraBundle{Extra: f.Spec.ClientCABundleRef, Base: kcp.MergedClientCAName(f.RootShard), Build: f.MergedClientCA},
		hostcluster.ExtraBundle{Extra: f.Spec.CABundleSecretRef, Base: rootshard.MergedCABundleName(f.RootShard), Build: f.MergedCABundle})
	w.Secret(f.DynamicKubeconfig())
	w.ConfigMap(f.ConfigMap())
	w.Services(f.Service())
	w.DeploymentWhenMounted(f.Namespace, f.DeploymentName(), f.Mounts(), f.Deployment)
	return w.Done()
}

// Watches are what a FrontProxy's reconcile reads.
func (c *Controller) Watches() controller.Watches {
	return controller.Watches{
		Kinds: []controller.Reference{
			// A Shard joining or leaving changes the service-account keys the front proxy verifies.
			{Kind: kinds.Shard, Keys: c.ofShard, Membership: true},
			{Kind: kinds.RootShard, Keys: func(m metav1.Object) []string { return c.ofRootShard(m.GetNamespace(), m.GetName()) }},
			// The root shard's VirtualWorkspace serves /services/, and those the path
			// mappings name their paths.
			{Kind: kinds.VirtualWorkspace, Keys: c.ofVirtualWorkspace},
		},
		Host: []controller.HostResource{controller.Secrets, controller.ConfigMaps, controller.Services,
			controller.Deployments, controller.DisruptionBudgets, controller.Certificates},
		Users: c.users,
	}
}

// users are the FrontProxies a host object concerns besides its owner: every FrontProxy of
// its RootShard.
func (c *Controller) users(m metav1.Object) []string {
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

// ofVirtualWorkspace are the keys of the FrontProxies whose path mappings name a
// VirtualWorkspace, and of the FrontProxies of the RootShards that name it.
func (c *Controller) ofVirtualWorkspace(m metav1.Object) []string {
	keys := c.NamingObject(controller.VirtualWorkspaceIndex)(m)
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
