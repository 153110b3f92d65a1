package kcp

import (
	"path"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// Where things are mounted in the kcp container (docs/WORKLOADS.md).
const (
	tlsDir = mountpaths.KcpTLSDir
	// EtcdTLSDir is where the etcd client TLS Secret is mounted.
	EtcdTLSDir   = mountpaths.EtcdTLSDir
	cacheKubeDir = mountpaths.CacheKubeconfigDir
	// KubeconfigKey is the key of a kubeconfig in its Secret.
	KubeconfigKey = "kubeconfig"
)

func caDir(role string) string   { return path.Join(tlsDir, "ca", role) }
func leafDir(role string) string { return path.Join(tlsDir, role) }

// KubeconfigDir is where the kubeconfig Secret of an identity is mounted.
func KubeconfigDir(identity string) string {
	return mountpaths.KcpKubeconfigDir(identity)
}

// onlyCert projects a CA's tls.crt alone: its key never enters the pod.
var onlyCert = []string{"tls.crt"}

// caMounts are the CAs the server trusts: its root shard's root CA (the user's, with
// spec.certificates.caSecretRef), its client CA bundle (its own, with a Shard's
// clientCABundleRef), the server CA, the request-header CA, and the server CA bundle the
// external admin kubeconfig and the virtual workspace server are verified by, where
// caBundleSecretRef makes one.
func (s Server) caMounts() []workload.Mount {
	rs := s.RootShard
	ms := []workload.Mount{
		{Volume: "ca-root", Secret: RootCASecret(rs), Dir: caDir("root"), Keys: onlyCert,
			User: rs.Spec.Certificates != nil && rs.Spec.Certificates.CASecretRef != nil},
		{Volume: "ca-client", Secret: s.clientCA(), Dir: caDir("client"), Keys: onlyCert},
		{Volume: "ca-server", Secret: pki.TrustSecretOf(rs, pki.ServerCA), Dir: caDir("server"), Keys: onlyCert},
		{Volume: "ca-requestheader-client", Secret: pki.TrustSecretOf(rs, pki.RequestHeaderClientCA), Dir: caDir("requestheader-client"), Keys: onlyCert},
	}
	if s.ServerCABundle != "" {
		ms = append(ms, workload.Mount{Volume: "ca-bundle", Secret: s.ServerCABundle, Dir: caDir("bundle"), Keys: onlyCert})
	}
	return ms
}

// ownMounts are the server's own certificates and admin kubeconfigs.
func (s Server) ownMounts() []workload.Mount {
	name := s.Name
	return []workload.Mount{
		{Volume: "server", Secret: pki.ServerSecretName(name), Dir: leafDir("server")},
		{Volume: "client", Secret: name + "-client", Dir: leafDir("client")},
		{Volume: "service-account", Secret: s.SigningSecret(), Dir: leafDir("service-account")},
		{Volume: LogicalClusterAdmin, Secret: name + "-" + LogicalClusterAdmin, Dir: leafDir(LogicalClusterAdmin)},
		{Volume: ExternalLogicalClusterAdmin, Secret: name + "-" + ExternalLogicalClusterAdmin, Dir: leafDir(ExternalLogicalClusterAdmin)},
		{Volume: LogicalClusterAdmin + "-kubeconfig", Secret: s.KubeconfigName(LogicalClusterAdmin), Dir: KubeconfigDir(LogicalClusterAdmin)},
		{Volume: ExternalLogicalClusterAdmin + "-kubeconfig", Secret: s.KubeconfigName(ExternalLogicalClusterAdmin), Dir: KubeconfigDir(ExternalLogicalClusterAdmin)},
	}
}

// SigningSecret is the slot of the server's signing leaf it signs its tokens with
// (pki.SigningSlots): --service-account-private-key-file.
func (s Server) SigningSecret() string {
	return pki.SlotName(ServiceAccountSecret(s.Name), pki.SigningSlots(s.RootShard.Status.Rotations).Issuer)
}

// ClientCASecret is the Secret of the client CA bundle the server trusts, which a virtual
// workspace server next to it trusts too.
func (s Server) ClientCASecret() string { return s.clientCA() }

// clientCA is the Secret of the client CA bundle the server trusts.
func (s Server) clientCA() string {
	if s.ClientCA != "" {
		return s.ClientCA
	}
	return MergedClientCAName(s.RootShard)
}

// Mounts are what the server's pod mounts, for the write of its Deployment: it is created
// once the Secrets the controllers and cert-manager write for the server exist, so that it
// does not roll once per Secret while a new setup is issued, and rolls when any mounted
// Secret changes, the user's and the other shards' included.
func (s Server) Mounts() []workload.Mount { return s.mounts() }

// MountedSecrets are the names of every Secret the pod mounts, sorted: the user's and the
// other shards' included.
func (s Server) MountedSecrets() []string { return workload.Secrets(s.mounts(), workload.AnySecret) }

// CacheKubeconfigName is the Secret of the kubeconfig toward a CacheServer, which its
// controller writes.
func CacheKubeconfigName(cacheServer string) string { return cacheServer + "-kubeconfig" }
