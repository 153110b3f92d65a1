// Package hostcluster is the host cluster as the controllers see it (Host): its clients and
// caches, the appliers that write only what changed and only what a setup owns (apply,
// ownership, adopt), a reconcile's batch of writes (Writes), the reads of what cert-manager
// issued, and the deletion of what a setup owned. It knows nothing of the controllers' loop.
package hostcluster

import (
	"sync"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	cmclientset "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned"
	cmlisters "github.com/cert-manager/cert-manager/pkg/client/listers/certmanager/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"k8s.io/client-go/kubernetes"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	policyv1listers "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/etcdmaint"
	"github.com/kcp-setups/apiserver/pkg/controller/etcdrestore"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
)

// Host is the host cluster as the controllers see it: its clients, the caches of what the
// controllers own there, and an applier per object type that writes only what changed.
type Host struct {
	Kube        kubernetes.Interface
	CertManager cmclientset.Interface
	// Claims, when set, are the clients of the reads before a first write (claim), with a
	// rate limiter apart from the writes', so that they do not double the time a burst of
	// new setups waits on the writes' limiter; unset, Kube and CertManager read.
	Claims *ClaimClients
	// leftoversGone are the UIDs of adopting owners whose kcp-operator leftovers were found
	// gone: they are not listed again on every reconcile while the annotation stays.
	leftoversGone sync.Map
	Certificates  cmlisters.CertificateLister
	Issuers       cmlisters.IssuerLister
	Secrets       corev1listers.SecretLister
	Services      corev1listers.ServiceLister
	Deployments   appsv1listers.DeploymentLister
	ConfigMaps    corev1listers.ConfigMapLister
	// DisruptionBudgets is set by WithDisruptionBudgets.
	DisruptionBudgets policyv1listers.PodDisruptionBudgetLister
	// StatefulSets is set by WithStatefulSets.
	StatefulSets appsv1listers.StatefulSetLister
	// SecretMetadata caches the metadata of every Secret, the users' too, so that a change
	// to a Secret a user names rolls the pods that mount it; nil in unit tests.
	SecretMetadata cache.SharedIndexInformer
	// ReferenceSecrets caches the Secrets labelled operator.kcp.io/reference in every
	// namespace (ReferenceSecretSelector): the copies that secretRefs name, which are the
	// users' and so not in Secrets. Read them with ResolveReference.
	ReferenceSecrets corev1listers.SecretLister
	// CertManagerAPI tells whether cert-manager's API is served and cached; nil in unit
	// tests, where it always is.
	CertManagerAPI *CertManagerAPI

	ConfigMapApplier   Applied[*corev1ac.ConfigMapApplyConfiguration]
	IssuerApplier      Applied[*cmapply.IssuerApplyConfiguration]
	CertificateApplier Applied[*cmapply.CertificateApplyConfiguration]
	SecretApplier      Applied[*corev1ac.SecretApplyConfiguration]
	ServiceApplier     Applied[*corev1ac.ServiceApplyConfiguration]
	DeploymentApplier  Applied[*appsv1ac.DeploymentApplyConfiguration]
	// DisruptionBudgetApplier is set by WithDisruptionBudgets.
	DisruptionBudgetApplier Applied[*policyv1ac.PodDisruptionBudgetApplyConfiguration]
	// StatefulSetApplier is set by WithStatefulSets.
	StatefulSetApplier Applied[*appsv1ac.StatefulSetApplyConfiguration]

	// signatures remembers, per leaf Secret, whether its CA's Secret signed it, for the
	// resourceVersions of both (ReissueStaleLeaves): a signature is checked once per change.
	signatures signatureCache

	// Kcp reaches the kcp servers the setups run, as the server's own identity; nil when the
	// controllers do not talk to kcp (unit tests of host-side work).
	Kcp Kcp
	// KcpHealth polls those kcp servers for the KcpReady condition; nil when they are not
	// polled (no KcpReady condition).
	KcpHealth *kcphealth.Poller
	// EtcdMaintenance keeps the managed etcds in shape (defragmentation, alarms), in the
	// rounds of KcpHealth; nil when it does not (no EtcdReady condition either).
	EtcdMaintenance *etcdmaint.Maintainer
	// EtcdRestores checks the snapshots restores name before the members start from them.
	EtcdRestores etcdrestore.Checks
	// NoKcpDialer is set when the server is told that no kcp can be reached from it
	// (--kcp-dialer=none): the health conditions say so without polling, and deletions do
	// not wait for a cleanup in kcp.
	NoKcpDialer bool
	// NoEtcdDialer is set when the server is told that no managed etcd can be reached from
	// it (--etcd-dialer=none, or --kcp-dialer=none without --etcd-dialer): EtcdReady says so
	// without polling.
	NoEtcdDialer bool
	// EtcdAgentImage is the image of a managed etcd's backup agent and of its members'
	// restore: the server's own (--etcd-agent-image); empty, no backup or restore is realized.
	EtcdAgentImage string
}

// Kcp builds clients for the kcp servers of RootShards and Shards and for the RootShards'
// internal front proxies (kcpclient.Clients). A
// config's host ends in /clusters/<workspace> when workspace is set; a
// *kcpclient.NotReadyError says the server's credentials are not issued yet.
type Kcp interface {
	// RootShard is rs's own kcp server: its /readyz, and the root workspace it hosts.
	RootShard(rs *operatorv1alpha1.RootShard, workspace string) (*rest.Config, error)
	// RootShardProxy is rs's internal front proxy, which reaches a workspace on whichever
	// shard hosts it.
	RootShardProxy(rs *operatorv1alpha1.RootShard, workspace string) (*rest.Config, error)
	Shard(sh *operatorv1alpha1.Shard, rs *operatorv1alpha1.RootShard, workspace string) (*rest.Config, error)
	// Etcd is a managed etcd's client endpoint, with kcp's client certificate in clientSecret.
	Etcd(ep kcpclient.Endpoint, clientSecret string) (*rest.Config, error)
}

// NewHost returns the host with its appliers, over caches that hold only what the
// controllers own. What a takeover from kcp-operator needs on top is WithKcpOperatorTakeover.
func NewHost(kube kubernetes.Interface, certManager cmclientset.Interface,
	certificates cmlisters.CertificateLister, issuers cmlisters.IssuerLister,
	secrets corev1listers.SecretLister, services corev1listers.ServiceLister, deployments appsv1listers.DeploymentLister,
	configMaps corev1listers.ConfigMapLister) *Host {
	c := &Host{Kube: kube, CertManager: certManager, Certificates: certificates, Issuers: issuers,
		Secrets: secrets, Services: services, Deployments: deployments, ConfigMaps: configMaps}
	c.SecretApplier, c.ServiceApplier, c.ConfigMapApplier = c.secretApplier(), c.serviceApplier(), c.configMapApplier()
	// The kinds whose spec has a generation: a change someone else makes to one is undone.
	c.IssuerApplier = c.issuerApplier().WithDriftDetection()
	c.CertificateApplier = c.certificateApplier().WithDriftDetection()
	// cert-manager writes a Certificate's Secret: its name is claimed with the Certificate's.
	c.CertificateApplier.Also = c.claimIssuedSecret
	// A CA Certificate keeps the key of the CA it renews.
	c.CertificateApplier.Prepare = c.keepCAKey
	c.DeploymentApplier = c.deploymentApplier().WithDriftDetection()
	return c
}

// ClaimClients are the clients of the reads before a first write.
type ClaimClients struct {
	Kube        kubernetes.Interface
	CertManager cmclientset.Interface
}

// claimKube is the client of the reads before a first write of a Kubernetes object.
func (c *Host) claimKube() kubernetes.Interface {
	if c.Claims != nil {
		return c.Claims.Kube
	}
	return c.Kube
}

// claimCertManager is the client of the reads before a first write of cert-manager's.
func (c *Host) claimCertManager() cmclientset.Interface {
	if c.Claims != nil {
		return c.Claims.CertManager
	}
	return c.CertManager
}

// gotten is what a read returned, or its error alone.
func gotten[T metav1.Object](obj T, err error) (metav1.Object, error) {
	if err != nil {
		return nil, err
	}
	return obj, nil
}

// applied is what an apply wrote, or its error alone.
func applied[T metav1.Object](obj T, err error) (metav1.Object, error) {
	if err != nil {
		return nil, err
	}
	return obj, nil
}
