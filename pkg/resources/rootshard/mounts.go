package rootshard

import (
	"path"
	"sort"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Where things are mounted in the kcp container (WORKLOADS.md).
const (
	tlsDir        = "/etc/kcp/tls"
	etcdTLSDir    = "/etc/etcd/tls"
	cacheKubeDir  = "/etc/cache-server/kubeconfig"
	kubeconfigKey = "kubeconfig"
)

// mount is a Secret mounted read-only into the kcp container.
type mount struct {
	volume, secret, dir string
	// onlyCert projects tls.crt alone: a CA's key never enters the pod.
	onlyCert bool
}

func caDir(role string) string   { return path.Join(tlsDir, "ca", role) }
func leafDir(role string) string { return path.Join(tlsDir, role) }
func kubeconfigDir(identity string) string {
	return "/etc/kcp/" + identity + "-kubeconfig"
}

// mounts are the Secrets the root shard's pod mounts, in a stable order.
func mounts(rs *operatorv1alpha1.RootShard) []mount {
	name := rs.Name
	ms := []mount{
		{volume: "ca-root", secret: RootCASecret(rs), dir: caDir("root"), onlyCert: true},
		{volume: "ca-client", secret: MergedClientCAName(rs), dir: caDir("client"), onlyCert: true},
		{volume: "ca-server", secret: pki.CAName(name, pki.ServerCA), dir: caDir("server"), onlyCert: true},
		{volume: "ca-requestheader-client", secret: pki.CAName(name, pki.RequestHeaderClientCA), dir: caDir("requestheader-client"), onlyCert: true},
		{volume: "server", secret: name + "-server", dir: leafDir("server")},
		{volume: "client", secret: name + "-client", dir: leafDir("client")},
		{volume: "service-account", secret: name + "-service-account", dir: leafDir("service-account")},
		{volume: LogicalClusterAdmin, secret: name + "-" + LogicalClusterAdmin, dir: leafDir(LogicalClusterAdmin)},
		{volume: ExternalLogicalClusterAdmin, secret: name + "-" + ExternalLogicalClusterAdmin, dir: leafDir(ExternalLogicalClusterAdmin)},
		{volume: LogicalClusterAdmin + "-kubeconfig", secret: KubeconfigName(rs, LogicalClusterAdmin), dir: kubeconfigDir(LogicalClusterAdmin)},
		{volume: ExternalLogicalClusterAdmin + "-kubeconfig", secret: KubeconfigName(rs, ExternalLogicalClusterAdmin), dir: kubeconfigDir(ExternalLogicalClusterAdmin)},
	}
	if tls := rs.Spec.Etcd.TLSConfig; tls != nil {
		ms = append(ms, mount{volume: "etcd-tls", secret: tls.SecretRef.Name, dir: etcdTLSDir})
	}
	if c := rs.Spec.Cache; c != nil && c.Reference != nil {
		ms = append(ms, mount{volume: "cache-kubeconfig", secret: c.Reference.Name + "-kubeconfig", dir: cacheKubeDir})
	}
	return ms
}

// MountedSecrets are the names of the Secrets the pod mounts, sorted: a change to any of them
// rolls the Deployment.
func MountedSecrets(rs *operatorv1alpha1.RootShard) []string {
	var names []string
	for _, m := range mounts(rs) {
		names = append(names, m.secret)
	}
	sort.Strings(names)
	return names
}

func (m mount) asVolume() *corev1ac.VolumeApplyConfiguration {
	src := corev1ac.SecretVolumeSource().WithSecretName(m.secret)
	if m.onlyCert {
		src.WithItems(corev1ac.KeyToPath().WithKey("tls.crt").WithPath("tls.crt"))
	}
	return corev1ac.Volume().WithName(m.volume).WithSecret(src)
}

func (m mount) asVolumeMount() *corev1ac.VolumeMountApplyConfiguration {
	return corev1ac.VolumeMount().WithName(m.volume).WithMountPath(m.dir).WithReadOnly(true)
}
