package kcp

import (
	"path"
	"sort"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
)

// Where things are mounted in the kcp container (WORKLOADS.md).
const (
	tlsDir = mountpaths.KcpTLSDir
	// EtcdTLSDir is where the etcd client TLS Secret is mounted.
	EtcdTLSDir   = mountpaths.EtcdTLSDir
	cacheKubeDir = mountpaths.CacheKubeconfigDir
	// KubeconfigKey is the key of a kubeconfig in its Secret.
	KubeconfigKey = "kubeconfig"
)

// Mount is a Secret mounted read-only into the kcp container.
type Mount struct {
	volume, secret, dir string
	// onlyCert projects tls.crt alone: a CA's key never enters the pod.
	onlyCert bool
	// external marks a Secret that the user or another object provides, whose absence does
	// not hold back the Deployment's creation.
	external bool
}

// NewMount mounts the Secret named secret as volume at dir.
func NewMount(volume, secret, dir string) Mount {
	return Mount{volume: volume, secret: secret, dir: dir}
}

func caDir(role string) string   { return path.Join(tlsDir, "ca", role) }
func leafDir(role string) string { return path.Join(tlsDir, role) }

// KubeconfigDir is where the kubeconfig Secret of an identity is mounted.
func KubeconfigDir(identity string) string {
	return mountpaths.KcpKubeconfigDir(identity)
}

// mounts are the Secrets the shard's pod mounts, in a stable order: its root shard's CAs,
// its own certificates and kubeconfigs, etcd TLS, the cache's kubeconfig, then the kind's.
func (s Shard) mounts() []Mount {
	name, rs := s.Name, s.RootShard
	ms := []Mount{
		{volume: "ca-root", secret: RootCASecret(rs), dir: caDir("root"), onlyCert: true, external: rs.Spec.Certificates != nil && rs.Spec.Certificates.CASecretRef != nil},
		{volume: "ca-client", secret: s.clientCA(), dir: caDir("client"), onlyCert: true},
		{volume: "ca-server", secret: pki.TrustSecretOf(rs, pki.ServerCA), dir: caDir("server"), onlyCert: true},
		{volume: "ca-requestheader-client", secret: pki.TrustSecretOf(rs, pki.RequestHeaderClientCA), dir: caDir("requestheader-client"), onlyCert: true},
	}
	if s.ServerCABundle != "" {
		ms = append(ms, Mount{volume: "ca-bundle", secret: s.ServerCABundle, dir: caDir("bundle"), onlyCert: true})
	}
	ms = append(ms, []Mount{
		{volume: "server", secret: name + "-server", dir: leafDir("server")},
		{volume: "client", secret: name + "-client", dir: leafDir("client")},
		{volume: "service-account", secret: ServiceAccountSecret(name), dir: leafDir("service-account")},
		{volume: LogicalClusterAdmin, secret: name + "-" + LogicalClusterAdmin, dir: leafDir(LogicalClusterAdmin)},
		{volume: ExternalLogicalClusterAdmin, secret: name + "-" + ExternalLogicalClusterAdmin, dir: leafDir(ExternalLogicalClusterAdmin)},
		{volume: LogicalClusterAdmin + "-kubeconfig", secret: s.KubeconfigName(LogicalClusterAdmin), dir: KubeconfigDir(LogicalClusterAdmin)},
		{volume: ExternalLogicalClusterAdmin + "-kubeconfig", secret: s.KubeconfigName(ExternalLogicalClusterAdmin), dir: KubeconfigDir(ExternalLogicalClusterAdmin)},
	}...)
	if s.Version().MountProxy() {
		ms = append(ms, Mount{volume: MountsProxy, secret: name + "-" + MountsProxy, dir: leafDir(MountsProxy)})
	}
	switch tls := s.Spec.Etcd.TLSConfig; {
	case s.Etcd != nil:
		ms = append(ms, Mount{volume: "etcd-tls", secret: s.Etcd.ClientSecret(), dir: EtcdTLSDir})
	case tls != nil:
		ms = append(ms, Mount{volume: "etcd-tls", secret: tls.SecretRef.Name, dir: EtcdTLSDir, external: true})
	}
	if s.UsesCacheServer() {
		ms = append(ms, Mount{volume: "cache-kubeconfig", secret: s.CacheKubeconfig(), dir: cacheKubeDir})
	}
	return append(ms, s.KindMounts...)
}

// ClientCASecret is the Secret of the client CA bundle the shard trusts, which a virtual
// workspace server next to it trusts too.
func (s Shard) ClientCASecret() string { return s.clientCA() }

// clientCA is the Secret of the client CA bundle the shard trusts.
func (s Shard) clientCA() string {
	if s.ClientCA != "" {
		return s.ClientCA
	}
	return MergedClientCAName(s.RootShard)
}

// MountedSecrets are the names of the Secrets the pod mounts, the optional configuration
// files' included, sorted: a change to any of them rolls the Deployment.
func (s Shard) MountedSecrets() []string {
	var names []string
	for _, m := range s.mounts() {
		names = append(names, m.secret)
	}
	names = append(names, s.optionalSecrets()...)
	sort.Strings(names)
	return names
}

// RealizedSecrets are the mounted Secrets the controllers and cert-manager write for the
// shard, sorted: its Deployment is created once they all exist, so that it does not roll
// once per Secret while a new setup is issued.
func (s Shard) RealizedSecrets() []string {
	var names []string
	for _, m := range s.mounts() {
		if !m.external {
			names = append(names, m.secret)
		}
	}
	sort.Strings(names)
	return names
}

func (m Mount) asVolume() *corev1ac.VolumeApplyConfiguration {
	src := corev1ac.SecretVolumeSource().WithSecretName(m.secret)
	if m.onlyCert {
		src.WithItems(corev1ac.KeyToPath().WithKey("tls.crt").WithPath("tls.crt"))
	}
	return corev1ac.Volume().WithName(m.volume).WithSecret(src)
}

func (m Mount) asVolumeMount() *corev1ac.VolumeMountApplyConfiguration {
	return corev1ac.VolumeMount().WithName(m.volume).WithMountPath(m.dir).WithReadOnly(true)
}

// CacheKubeconfigName is the Secret of the kubeconfig toward a CacheServer, which its
// controller writes.
func CacheKubeconfigName(cacheServer string) string { return cacheServer + "-kubeconfig" }
