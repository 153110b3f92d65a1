package virtualworkspace

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
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

// volume names all begin with mountpaths.VirtualWorkspaceVolumePrefix, which validation
// keeps the user's volumes off.
func volume(name string) string { return mountpaths.VirtualWorkspaceVolumePrefix + name }

// caMount projects a CA's tls.crt alone: its key never enters the pod.
func caMount(name, secret, dir string) workload.Mount {
	return workload.Mount{Volume: volume(name), Secret: secret, Dir: dir, Keys: []string{"tls.crt"}}
}

// caMounts are the CAs every container of the pod gets: the server CA, which the kubeconfigs
// toward kcp trust; the client CA bundle and the request-header CA the server verifies its
// clients by; and the server CA bundle the external admin kubeconfig trusts, where it has
// one.
func (v VirtualWorkspace) caMounts() []workload.Mount {
	ms := []workload.Mount{
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
func (v VirtualWorkspace) clientMount() workload.Mount {
	return workload.Mount{Volume: volume("client"), Secret: v.ClientName(), Dir: clientDir}
}

// cacheMounts are the kubeconfig toward the cache: the target's cache server's, which carries
// its credentials as data, else, for a container that has the client certificate, the one
// toward the root shard's embedded cache.
func (v VirtualWorkspace) cacheMounts(hasClient bool) []workload.Mount {
	switch {
	case v.Target.Cache != nil:
		return []workload.Mount{{Volume: volume("cache-kubeconfig"), Secret: kcp.CacheKubeconfigName(v.Target.Cache.Name), Dir: cacheKubeconfigDir}}
	case v.needsRootCache() && hasClient:
		return []workload.Mount{{Volume: volume("cache-kubeconfig"), Secret: v.RootCacheKubeconfigName(), Dir: cacheKubeconfigDir}}
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
func (v VirtualWorkspace) serverMounts() []workload.Mount {
	ms := append(v.caMounts(), workload.Mount{Volume: volume("server"), Secret: v.ServerName(), Dir: servingDir})
	if users, ok := v.usersKubeconfig(-1); ok {
		ms = append(ms, users)
	} else {
		ms = append(ms, v.clientMount(), workload.Mount{Volume: volume("kubeconfig"), Secret: v.KubeconfigName(), Dir: kubeconfigDir})
	}
	if v.HasExternalAdmin() {
		ms = append(ms,
			workload.Mount{Volume: volume("external-admin"), Secret: v.ExternalAdminName(), Dir: externalAdminDir},
			workload.Mount{Volume: volume("external-admin-kubeconfig"), Secret: v.ExternalAdminKubeconfigName(), Dir: externalAdminKubeconfigDir})
	}
	return append(ms, v.cacheMounts(v.OwnIdentity())...)
}

// initMounts are the Secrets the i-th init container mounts: the CAs, the cache's kubeconfig,
// and a kubeconfig at InitKubeconfigDir, its own kubeconfigSecretRef, else the server's
// client kubeconfig with the client certificate it names. Never the serving certificate's
// key, nor the external admin's.
func (v VirtualWorkspace) initMounts(i int) []workload.Mount {
	ms := v.caMounts()
	users, ok := v.usersKubeconfig(i)
	if ok {
		ms = append(ms, users)
	} else {
		ms = append(ms, v.clientMount(), workload.Mount{Volume: volume("kubeconfig"), Secret: v.KubeconfigName(), Dir: InitKubeconfigDir})
	}
	return append(ms, v.cacheMounts(!ok)...)
}

// usersKubeconfig is the mount of the kubeconfig the user brings for the server
// (spec.kubeconfigSecretRef, i < 0) or the i-th init container (its kubeconfigSecretRef),
// with only its kubeconfig, if the user brings one. It needs nothing of the target, so that
// the watch of users' Secrets (UsersSecrets) reads it from the object alone.
func (v VirtualWorkspace) usersKubeconfig(i int) (workload.Mount, bool) {
	ref, name, dir := v.Spec.KubeconfigSecretRef, "server-kubeconfig", kubeconfigDir
	if i >= 0 {
		ref, name, dir = v.Spec.InitContainers[i].KubeconfigSecretRef, "init-kubeconfig-"+strconv.Itoa(i), InitKubeconfigDir
	}
	if ref == nil {
		return workload.Mount{}, false
	}
	return workload.Mount{Volume: volume(name), Secret: ref.Name, Dir: dir, Keys: []string{kcp.KubeconfigKey}, User: true}, true
}

// allMounts are the mounts of every container of the pod.
func (v VirtualWorkspace) allMounts() []workload.Mount {
	ms := v.serverMounts()
	for i := range v.Spec.InitContainers {
		ms = append(ms, v.initMounts(i)...)
	}
	return ms
}

// Mounts are the mounts of every container of the pod, and the user's Secrets the pods use
// otherwise or the bundles are made of (workload.RollOnly): the Deployment is created once
// those the controllers and cert-manager write exist, and a change to any of them, or to one
// of the user's (UsersSecrets), rolls it.
func (v VirtualWorkspace) Mounts() []workload.Mount {
	return append(v.allMounts(), workload.RollOnly(v.UsersSecrets()...)...)
}

// UsersSecrets are the Secrets of the user's that the pods use, sorted and once each: the
// kubeconfigs of the server and the init containers, the extra client CAs, and every Secret
// of the extra volumes and the init containers' volumes, projected ones included. A change to
// one rolls the Deployment too.
func (v VirtualWorkspace) UsersSecrets() []string {
	var users []workload.Mount
	for i := -1; i < len(v.Spec.InitContainers); i++ {
		if m, ok := v.usersKubeconfig(i); ok {
			users = append(users, m)
		}
	}
	names := workload.Secrets(users, workload.UsersSecret)
	names = append(names, v.BundleSources()...)
	names = append(names, volumeSecrets(v.Spec.ExtraVolumes)...)
	for _, ic := range v.Spec.InitContainers {
		names = append(names, volumeSecrets(ic.Volumes)...)
	}
	return workload.SortedSet(names)
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
