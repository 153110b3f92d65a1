// Package kcp builds the kcp server process of a root shard or a shard: its command line,
// mounts, Deployment, Service, admin kubeconfigs and leaf certificates. The rootshard and
// shard packages describe their kind to it as a Server. Every function is pure.
package kcp

import (
	"fmt"
	"net/url"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// Server is a kcp server process, of a root shard or a shard: what the builders need to know
// of it. "Shard" names the kind alone.
type Server struct {
	// Kind is the owner label's kind: rootshard or shard.
	Kind      string
	Name      string
	Namespace string
	// ServiceName names the Service and the Deployment, and is the base of the DNS names.
	ServiceName string
	Spec        *operatorv1alpha1.CommonShardSpec
	// RootShard is the root shard whose PKI and external address the server uses; a root
	// shard's is itself.
	RootShard *operatorv1alpha1.RootShard
	// Cache is the CacheServer the server uses, if any.
	Cache *corev1.LocalObjectReference
	// CacheSecretRef, when set instead, is the copy of a CacheServer's cache-client Secret
	// the server uses: the controller writes CacheKubeconfig from it.
	CacheSecretRef *corev1.LocalObjectReference
	// CacheLink, when set instead, is the bootstrap Secret of the link over which the server's
	// cache client is signed (a linked Shard's spec.cache.link): the controller writes
	// CacheKubeconfig from the link's bundles and the issued client.
	CacheLink *corev1.LocalObjectReference
	// KindArgs come after the common flags: what only this kind passes to kcp.
	KindArgs []string
	// KindMounts are the Secrets only this kind mounts.
	KindMounts []workload.Mount
	// ServiceAccountIssuers are the root shard and shards of RootShard whose service-account
	// Secret exists, as the controller found them. With auth.serviceAccount enabled, the server
	// verifies tokens with each one's public key; its own is always verified.
	ServiceAccountIssuers []string
	// ClientCA, when set, is the Secret of the client CA bundle the server trusts instead of
	// its root shard's merged client CA: a Shard's own, with its clientCABundleRef.
	ClientCA string
	// ServerCABundle, when set, is the Secret of the CA bundle that verifies the
	// installation's external address, which the external logical-cluster-admin kubeconfig
	// trusts instead of the server CA alone: the front proxy there may serve a certificate
	// of another issuer, whose CA caBundleSecretRef brings.
	ServerCABundle string
	// VirtualWorkspace, when set, is the standalone virtual workspace server the kcp server
	// leaves its virtual workspaces to (spec.kcpVirtualWorkspace, resolved by the
	// controller); nil, kcp serves them in process.
	VirtualWorkspace *VirtualWorkspaceEndpoint
	// Etcd is the server's managed etcd (spec.etcd.managed); nil, the server uses the etcd of
	// spec.etcd.endpoints.
	Etcd *etcd.Cluster
}

// VirtualWorkspaceEndpoint is a standalone virtual workspace server as a kcp server sees it.
type VirtualWorkspaceEndpoint struct {
	// URL is where the kcp server reaches it and what it announces as its virtual
	// workspace URL: the VirtualWorkspace's URL().
	URL string
}

// The admin identities a kcp server has kubeconfigs for.
const (
	LogicalClusterAdmin         = "logical-cluster-admin"
	ExternalLogicalClusterAdmin = "external-logical-cluster-admin"
)

// MountsProxy is the role of the client certificate a kcp server forwards requests for mounted
// workspaces to the front proxy with; MountsProxyCommonName is its user, which the front
// proxy's --requestheader-allowed-names lets through.
const (
	MountsProxy           = "mounts-proxy"
	MountsProxyCommonName = "kcp-mounts-proxy"
)

// Version is the kcp release of the server's image.
func (s Server) Version() kcpversion.Version { return workload.KcpVersion(s.Spec.Image) }

// DeploymentName is the name of the server's Deployment, the same as its Service's.
func (s Server) DeploymentName() string { return s.ServiceName }

// KubeconfigName is the Secret of the kubeconfig of an admin identity.
func (s Server) KubeconfigName(identity string) string {
	return s.Name + "-" + identity + "-kubeconfig"
}

// BaseURL is the URL the server is reached at inside the cluster, unless the spec overrides it.
func (s Server) BaseURL() string {
	if s.Spec.ShardBaseURL != "" {
		return s.Spec.ShardBaseURL
	}
	return fmt.Sprintf("https://%s.%s.svc.%s:%d", s.ServiceName, s.Namespace, s.ClusterDomain(), SecurePort)
}

// UsesCacheServer reports whether the server uses a CacheServer rather than the root shard's
// embedded cache.
func (s Server) UsesCacheServer() bool {
	return s.Cache != nil || s.CacheSecretRef != nil || s.CacheLink != nil
}

// CacheKubeconfig is the Secret of the server's kubeconfig toward its CacheServer: the
// CacheServer's own, or, for a copy of its cache-client Secret or a link, one the server owns.
func (s Server) CacheKubeconfig() string {
	if s.Cache != nil {
		return CacheKubeconfigName(s.Cache.Name)
	}
	return s.ServiceName + "-cache-kubeconfig"
}

// SecurePort is the port kcp serves on, in its pod and on its Service.
const SecurePort = pki.KcpSecurePort

// ClusterDomain is the host cluster's DNS domain the server's Service names are in.
func (s Server) ClusterDomain() string { return clusterDomain(s.Spec.ClusterDomain) }

// ExternalURL is the URL the kcp installation is reached at from outside: the root shard's.
func (s Server) ExternalURL() string {
	port := s.RootShard.Spec.External.Port
	if port == 0 {
		port = operatorv1alpha1.DefaultExternalPort
	}
	return fmt.Sprintf("https://%s:%d", s.RootShard.Spec.External.Hostname, port)
}

// ExternalAdminURL is where the external logical-cluster-admin reaches the installation:
// the root shard's private address when it has one, as in kcp-operator, else its external
// URL. The private port defaults to the external port.
func (s Server) ExternalAdminURL() string {
	e := s.RootShard.Spec.External
	if e.PrivateHostname == "" {
		return s.ExternalURL()
	}
	port := e.Port
	if e.PrivatePort != nil {
		port = *e.PrivatePort
	}
	if port == 0 {
		port = operatorv1alpha1.DefaultExternalPort
	}
	return fmt.Sprintf("https://%s:%d", e.PrivateHostname, port)
}

// Leaves are the server's own certificates, signed by its root shard's CAs, with the mount
// proxy's identity where the image's kcp has a mount proxy. The root shard has one too: its
// local proxy serves the mounted workspaces it holds like any shard's.
func (s Server) Leaves() []pki.Leaf {
	rs, name := s.RootShard.Name, s.Name
	leaves := []pki.Leaf{
		{Name: pki.ServerSecretName(name), Role: "server", Issuer: pki.CAName(rs, pki.ServerCA), CommonName: name,
			DNSNames: s.serverDNSNames(), Usage: pki.ServerAuth},
		{Name: name + "-client", Role: "client", Issuer: pki.CAName(rs, pki.ClientCA), CommonName: "shard-" + name,
			Organization: []string{"system:masters"}, Usage: pki.ClientAuth},
	}
	// The signing leaf, in each live slot (pki.SigningSlots).
	for _, slot := range pki.SigningSlots(s.RootShard.Status.Rotations).Live {
		leaves = append(leaves, pki.Leaf{Name: pki.SlotName(ServiceAccountSecret(name), slot), Role: pki.ServiceAccountRole,
			Issuer: pki.CAName(rs, pki.ServiceAccountCA), CommonName: name + "-service-account", Usage: pki.Signing})
	}
	leaves = append(leaves, []pki.Leaf{
		{Name: name + "-" + LogicalClusterAdmin, Role: LogicalClusterAdmin, Issuer: pki.CAName(rs, pki.ClientCA),
			CommonName: LogicalClusterAdmin, Organization: []string{"system:kcp:logical-cluster-admin"}, Usage: pki.ClientAuth},
		{Name: name + "-" + ExternalLogicalClusterAdmin, Role: ExternalLogicalClusterAdmin, Issuer: pki.CAName(rs, pki.ClientCA),
			CommonName: ExternalLogicalClusterAdmin, Organization: []string{"system:kcp:external-logical-cluster-admin"}, Usage: pki.ClientAuth},
	}...)
	if s.Version().MountProxy() {
		leaves = append(leaves, pki.Leaf{Name: name + "-" + MountsProxy, Role: MountsProxy,
			Issuer: pki.CAName(rs, pki.RequestHeaderClientCA), CommonName: MountsProxyCommonName, Usage: pki.ClientAuth})
	}
	return leaves
}

// serverDNSNames are the names the server is reached by: its Service in every form, the
// installation's external hostname for a root shard, the host of its base URL, and
// localhost for its own probes.
func (s Server) serverDNSNames() []string {
	svc := s.ServiceName
	names := []string{svc, svc + "." + s.Namespace, svc + "." + s.Namespace + ".svc",
		svc + "." + s.Namespace + ".svc." + clusterDomain(s.Spec.ClusterDomain)}
	if s.Kind == RootShardKind && s.RootShard.Spec.External.Hostname != "" {
		names = append(names, s.RootShard.Spec.External.Hostname)
	}
	if u, err := url.Parse(s.Spec.ShardBaseURL); err == nil && u.Hostname() != "" {
		names = append(names, u.Hostname())
	}
	return append(names, "localhost")
}

// RootShardKind is the owner label's kind of a root shard.
const RootShardKind = pki.RootShardKind

// RootCASecret is the Secret that holds a root shard's root CA certificate: the user's when
// it brings one, else the one cert-manager issues, or, from its first rotation on, the
// bundle <rs>-ca-trust of its live slots (pki.RootTrustSecret).
func RootCASecret(rs *operatorv1alpha1.RootShard) string {
	if c := rs.Spec.Certificates; c != nil && c.CASecretRef != nil {
		return c.CASecretRef.Name
	}
	return pki.RootTrustSecret(rs)
}

// MergedClientCAName is the Secret with every CA a root shard's shards trust for clients.
func MergedClientCAName(rs *operatorv1alpha1.RootShard) string { return rs.Name + "-merged-client-ca" }

func clusterDomain(d string) string {
	if d == "" {
		return operatorv1alpha1.DefaultClusterDomain
	}
	return d
}

// RootShardProxyCommonName is the user of the request-header certificate of a RootShard's
// internal front proxy (kcp-operator's name), which every shard's
// --requestheader-allowed-names lets through next to kcp-front-proxy.
const RootShardProxyCommonName = "kcp-root-shard-proxy"
