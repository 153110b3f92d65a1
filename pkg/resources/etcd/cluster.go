// Package etcd builds the etcd cluster the server runs for a root shard or a shard with
// spec.etcd.managed: its certificates, signed by the RootShard's etcd CAs, its StatefulSet,
// its Services and its PodDisruptionBudget. The rootshard and shard packages describe their
// kind to it as a Cluster. Every function is pure.
package etcd

import (
	"fmt"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// The ports of a member.
const (
	ClientPort  = 2379
	PeerPort    = 2380
	MetricsPort = 2381
)

// Component is the component label of everything the etcd cluster is made of.
const Component = "etcd"

// Cluster is what the builders need to know of a managed etcd.
type Cluster struct {
	// Kind is the owner label's kind: rootshard or shard.
	Kind string
	// OwnerName is the name of the RootShard or Shard that owns the cluster.
	OwnerName string
	// Base is the prefix of every name: the RootShard's name, or "<shard>-shard".
	Base          string
	Namespace     string
	ClusterDomain string
	// RootShard is the RootShard whose etcd CAs sign the certificates.
	RootShard string
	Spec      *operatorv1alpha1.ManagedEtcd
	// OwnerUID is the owner's UID, which the members' volume claims carry (pki.LabelOwnerUID),
	// so that AnnotationDeleteEtcdVolumes deletes the owner's claims and no other's of the
	// same name. Empty, the claims carry none (a StatefulSet from before the mark, whose claim
	// templates cannot change).
	OwnerUID types.UID
	// AgentImage is the server's own image, which runs the backup agent and the members'
	// restore.
	AgentImage string
	// Restoring, when set, gives every member an init container that restores the snapshot
	// into its empty data directory (the controller sets it while the restore applies).
	Restoring *Restoring
	// HoldForRestore keeps the StatefulSet from being created: the snapshot a restore names
	// has not passed its check (the controller sets it).
	HoldForRestore bool
	// DropRestoreClient deletes the restore client certificate (RestoreClientName) and its
	// Secret, when they carry the owner's UID: no restore reads with it any longer (the
	// controller sets it).
	DropRestoreClient bool
}

// Restoring is where the members' restore reads the snapshot: an agent (SourceURL), with the
// member's serving certificate (its own agent, of the same RootShard's etcd client CA) or,
// from another setup's store, with the restore client certificate (Certificate, issued by the
// source RootShard's etcd client CA) and that CA as the agent's trust. The agent reads its
// store, a volume or a bucket.
type Restoring struct {
	Snapshot  string
	SourceURL string
	// ClientSecret, set for a restore from another setup's agent, is the Secret of the client
	// certificate the members read the snapshot with (RestoreClientName); Certificate is that
	// certificate, which the realize applies (nil once the StatefulSet restores: it exists).
	// SourceTrust is the Secret of the source RootShard's etcd client CA alone
	// (ClientTrustSecret), which issued the source agent's serving certificate.
	ClientSecret, SourceTrust string
	Certificate               *cmapply.CertificateApplyConfiguration
}

// New describes the managed etcd of a RootShard or Shard (owner, its metadata, and spec),
// or returns nil when the spec names an external etcd. base prefixes every name; rootShard
// names the RootShard whose etcd CAs sign its certificates.
func New(kind string, owner *metav1.ObjectMeta, spec *operatorv1alpha1.CommonShardSpec, base, rootShard string) *Cluster {
	if spec.Etcd.Managed == nil {
		return nil
	}
	domain := spec.ClusterDomain
	if domain == "" {
		domain = operatorv1alpha1.DefaultClusterDomain
	}
	return &Cluster{
		Kind: kind, OwnerName: owner.Name, Base: base, Namespace: owner.Namespace, ClusterDomain: domain,
		RootShard: rootShard, Spec: spec.Etcd.Managed, OwnerUID: owner.UID,
	}
}

// The certificate roles of a managed etcd, its certificateTemplates keys.
const (
	ServerRole = "etcd-server"
	PeerRole   = "etcd-peer"
	ClientRole = "etcd-client"
)

// Name is the name of the StatefulSet, the client Service and the PodDisruptionBudget.
func (c *Cluster) Name() string { return c.Base + "-etcd" }

// PeerServiceName is the name of the headless Service that gives each member its DNS name.
func (c *Cluster) PeerServiceName() string { return c.Base + "-etcd-peers" }

// ServerSecret is the Secret (and Certificate) of the members' serving certificate.
func (c *Cluster) ServerSecret() string { return c.Base + "-" + ServerRole }

// PeerSecret is the Secret (and Certificate) the members present to one another.
func (c *Cluster) PeerSecret() string { return c.Base + "-" + PeerRole }

// ClientSecret is the Secret (and Certificate) of kcp's client certificate toward the
// cluster: tls.crt (with its chain), tls.key and ca.crt, the root of that chain, to which
// the members' serving certificate chains too.
func (c *Cluster) ClientSecret() string { return c.Base + "-" + ClientRole }

// Replicas is the member count; defaulting stores 3 when the spec says nothing.
func (c *Cluster) Replicas() int32 {
	if c.Spec.Replicas == nil {
		return operatorv1alpha1.DefaultEtcdReplicas
	}
	return *c.Spec.Replicas
}

// ClaimNames are the members' volume claims, as the StatefulSet controller names them:
// <template>-<StatefulSet>-<ordinal>, for every member (spec.etcd.managed.replicas cannot
// change, so there are no others). A nil Cluster, an external etcd, has none.
func (c *Cluster) ClaimNames() []string {
	if c == nil {
		return nil
	}
	names := make([]string, 0, c.Replicas())
	for i := range c.Replicas() {
		names = append(names, dataVolume+"-"+c.MemberName(i))
	}
	return names
}

// VolumeClaimNames are the claims that hold the managed etcd's data: the members'
// (ClaimNames) and the backup agent's snapshot volume, which may exist although the spec no
// longer asks for a backup (the snapshots outlive it). A nil Cluster has none.
func (c *Cluster) VolumeClaimNames() []string {
	if c == nil {
		return nil
	}
	return append(c.ClaimNames(), c.SnapshotClaimName())
}

// MemberName is the pod name of member i.
func (c *Cluster) MemberName(i int32) string { return fmt.Sprintf("%s-%d", c.Name(), i) }

// memberHost is the fully qualified DNS name of the member whose pod is named pod.
func (c *Cluster) memberHost(pod string) string {
	return pod + "." + c.PeerServiceName() + "." + c.Namespace + ".svc." + c.ClusterDomain
}

// ClientURLs are every member's client URL, which kcp's --etcd-servers lists.
func (c *Cluster) ClientURLs() []string {
	urls := make([]string, 0, c.Replicas())
	for i := range c.Replicas() {
		urls = append(urls, fmt.Sprintf("https://%s:%d", c.memberHost(c.MemberName(i)), ClientPort))
	}
	return urls
}

// Labels are the labels of everything the cluster is made of; the owner label among them
// lets the controllers find and delete it.
func (c *Cluster) Labels() map[string]string { return pki.Labels(c.Kind, c.OwnerName, Component) }

// SelectorLabels select the members' pods, and the StatefulSet controller puts them on the
// members' volume claims.
func (c *Cluster) SelectorLabels() map[string]string {
	return map[string]string{pki.LabelInstance: c.OwnerName, pki.LabelComponent: Component, pki.OwnerLabel(c.Kind): c.OwnerName}
}
