package virtualworkspace

import (
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
)

// Where things are mounted in the pod's containers, all under mountpaths.VirtualWorkspaceDir,
// which validation reserves, except an init container's kubeconfig.
const (
	baseDir                    = mountpaths.VirtualWorkspaceDir
	caServerDir                = baseDir + "/ca/server"
	caClientDir                = baseDir + "/ca/client"
	caRequestHeaderDir         = baseDir + "/ca/requestheader-client"
	caBundleDir                = baseDir + "/ca/bundle"
	servingDir                 = baseDir + "/server"
	clientDir                  = baseDir + "/client"
	kubeconfigDir              = baseDir + "/kubeconfig"
	externalAdminDir           = baseDir + "/external-admin"
	externalAdminKubeconfigDir = baseDir + "/external-admin-kubeconfig"
	cacheKubeconfigDir         = baseDir + "/cache-kubeconfig"
	// InitKubeconfigDir is where an init container finds its kubeconfig: kcp-operator's
	// documented path, which init containers name in their args.
	InitKubeconfigDir = mountpaths.VirtualWorkspaceInitKubeconfigDir

	serverCAFile = caServerDir + "/tls.crt"
)

// mount is a Secret mounted read-only into a container of the pod.
type mount struct {
	volume, secret, dir string
	// keys, when set, are the only keys projected: a CA's tls.crt, never its key, and the
	// kubeconfig alone of a user's Secret.
	keys []string
	// users marks a Secret the user provides, which the Deployment does not wait for.
	users bool
}

// volume names all begin with mountpaths.VirtualWorkspaceVolumePrefix, which validation
// keeps the user's volumes off.
func volume(name string) string { return mountpaths.VirtualWorkspaceVolumePrefix + name }

func caMount(name, secret, dir string) mount {
	return mount{volume: volume(name), secret: secret, dir: dir, keys: []string{"tls.crt"}}
}

// caMounts are the CAs every container of the pod gets: the server CA, which the kubeconfigs
// toward kcp trust; the client CA bundle and the request-header CA the server verifies its
// clients by; and the server CA bundle the external admin kubeconfig trusts, where it has
// one.
func (v VirtualWorkspace) caMounts() []mount {
	ms := []mount{
		caMount("ca-server", pki.TrustSecretOf(v.Target.RootShard, pki.ServerCA), caServerDir),
		caMount("ca-client", v.ClientCASecret(), caClientDir),
		caMount("ca-requestheader-client", pki.TrustSecretOf(v.Target.RootShard, pki.RequestHeaderClientCA), caRequestHeaderDir),
	}
	if bundle := v.externalAdminCABundle(); v.HasExternalAdmin() && bundle != "" {
		ms = append(ms, caMount("ca-bundle", bundle, caBundleDir))
	}
	return ms
}

// clientMount is the server's client certificate, at the path its kubeconfigs name.
func (v VirtualWorkspace) clientMount() mount {
	return mount{volume: volume("client"), secret: v.ClientName(), dir: clientDir}
}

// cacheMounts are the kubeconfig toward the cache: the target's cache server's, which carries
// its credentials as data, else, for a container that has the client certificate, the one
// toward the root shard's embedded cache.
func (v VirtualWorkspace) cacheMounts(hasClient bool) []mount {
	switch {
	case v.Target.Cache != nil:
		return []mount{{volume: volume("cache-kubeconfig"), secret: kcp.CacheKubeconfigName(v.Target.Cache.Name), dir: cacheKubeconfigDir}}
	case v.needsRootCache() && hasClient:
		return []mount{{volume: volume("cache-kubeconfig"), secret: v.RootCacheKubeconfigName(), dir: cacheKubeconfigDir}}
	}
	return nil
}

// cacheKubeconfig is the --cache-kubeconfig of kcp's server, empty where it falls back to its
// --kubeconfig: a root shard's embedded cache is the root shard itself.
func (v VirtualWorkspace) cacheKubeconfig() string {
	if len(v.cacheMounts(v.OwnIdentity())) == 0 {
		return ""
	}
	return cacheKubeconfigDir + "/" + kcp.KubeconfigKey
}

// serverMounts are the Secrets the server container mounts: the CAs, its serving certificate,
// its identity toward kcp (its client certificate and kubeconfig, or the user's kubeconfig
// instead, without the client certificate), the external admin identity where it has one,
// and the cache's kubeconfig.
func (v VirtualWorkspace) serverMounts() []mount {
	ms := append(v.caMounts(), mount{volume: volume("server"), secret: v.ServerName(), dir: servingDir})
	if ref := v.Spec.KubeconfigSecretRef; ref != nil {
		ms = append(ms, mount{volume: volume("server-kubeconfig"), secret: ref.Name, dir: kubeconfigDir,
			keys: []string{kcp.KubeconfigKey}, users: true})
	} else {
		ms = append(ms, v.clientMount(), mount{volume: volume("kubeconfig"), secret: v.KubeconfigName(), dir: kubeconfigDir})
	}
	if v.HasExternalAdmin() {
		ms = append(ms,
			mount{volume: volume("external-admin"), secret: v.ExternalAdminName(), dir: externalAdminDir},
			mount{volume: volume("external-admin-kubeconfig"), secret: v.ExternalAdminKubeconfigName(), dir: externalAdminKubeconfigDir})
	}
	return append(ms, v.cacheMounts(v.OwnIdentity())...)
}

// initMounts are the Secrets the i-th init container mounts: the CAs, the cache's kubeconfig,
// and a kubeconfig at InitKubeconfigDir, its own kubeconfigSecretRef, else the server's
// client kubeconfig with the client certificate it names. Never the serving certificate's
// key, nor the external admin's.
func (v VirtualWorkspace) initMounts(i int) []mount {
	ms := v.caMounts()
	ref := v.Spec.InitContainers[i].KubeconfigSecretRef
	if ref != nil {
		ms = append(ms, mount{volume: volume("init-kubeconfig-" + strconv.Itoa(i)), secret: ref.Name, dir: InitKubeconfigDir,
			keys: []string{kcp.KubeconfigKey}, users: true})
	} else {
		ms = append(ms, v.clientMount(), mount{volume: volume("kubeconfig"), secret: v.KubeconfigName(), dir: InitKubeconfigDir})
	}
	return append(ms, v.cacheMounts(ref == nil)...)
}

// allMounts are the mounts of every container of the pod.
func (v VirtualWorkspace) allMounts() []mount {
	ms := v.serverMounts()
	for i := range v.Spec.InitContainers {
		ms = append(ms, v.initMounts(i)...)
	}
	return ms
}

// MountedSecrets are the names of the Secrets the pods mount that the controllers and
// cert-manager write, sorted and once each: the Deployment is created once they exist, and a
// change to any of them rolls it.
func (v VirtualWorkspace) MountedSecrets() []string {
	var names []string
	for _, m := range v.allMounts() {
		if !m.users {
			names = append(names, m.secret)
		}
	}
	return sortedSet(names)
}

// UsersSecrets are the Secrets of the user's that the pods use, sorted and once each: the
// kubeconfigs of the server and the init containers, the extra client CAs, and every Secret
// of the extra volumes and the init containers' volumes, projected ones included. A change to
// one rolls the Deployment too.
func (v VirtualWorkspace) UsersSecrets() []string {
	var names []string
	if ref := v.Spec.KubeconfigSecretRef; ref != nil {
		names = append(names, ref.Name)
	}
	names = append(names, v.BundleSources()...)
	names = append(names, volumeSecrets(v.Spec.ExtraVolumes)...)
	for _, ic := range v.Spec.InitContainers {
		if ic.KubeconfigSecretRef != nil {
			names = append(names, ic.KubeconfigSecretRef.Name)
		}
		names = append(names, volumeSecrets(ic.Volumes)...)
	}
	return sortedSet(names)
}

// volumeSecrets are the Secrets that volumes mount, directly or projected.
func volumeSecrets(volumes []corev1.Volume) []string {
	var names []string
	for _, vol := range volumes {
		if s := vol.Secret; s != nil && s.SecretName != "" {
			names = append(names, s.SecretName)
		}
		if p := vol.Projected; p != nil {
			for _, src := range p.Sources {
				if s := src.Secret; s != nil && s.Name != "" {
					names = append(names, s.Name)
				}
			}
		}
	}
	return names
}

func sortedSet(names []string) []string {
	sort.Strings(names)
	out := names[:0]
	for i, n := range names {
		if i == 0 || n != names[i-1] {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (m mount) asVolume() *corev1ac.VolumeApplyConfiguration {
	src := corev1ac.SecretVolumeSource().WithSecretName(m.secret)
	for _, k := range m.keys {
		src.WithItems(corev1ac.KeyToPath().WithKey(k).WithPath(k))
	}
	return corev1ac.Volume().WithName(m.volume).WithSecret(src)
}

func (m mount) asVolumeMount() *corev1ac.VolumeMountApplyConfiguration {
	return corev1ac.VolumeMount().WithName(m.volume).WithMountPath(m.dir).WithReadOnly(true)
}
