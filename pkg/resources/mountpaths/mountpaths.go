// Package mountpaths holds the directories the controllers mount into the components'
// containers. The builders mount there and validation reserves them against the user's
// extraVolumeMounts, from this one list; it imports nothing so that validation can use it.
package mountpaths

// Directories in the kcp container of a RootShard or Shard (docs/WORKLOADS.md).
const (
	// KcpTLSDir holds the shard's certificates and its CAs' certificates.
	KcpTLSDir = "/etc/kcp/tls"
	// KcpOIDCCADir holds the OIDC issuer's CA; the front proxy mounts it at the same path.
	KcpOIDCCADir = "/etc/kcp/oidc-ca"
	// KcpAuditDir holds the audit policy and the audit webhook's kubeconfig.
	KcpAuditDir = "/etc/kcp/audit"
	// KcpAuthorizationDir holds the authorization webhook's kubeconfig.
	KcpAuthorizationDir = "/etc/kcp/authorization"
	// KcpAuthenticationDir holds the token webhook's kubeconfig and the static token file;
	// the front proxy mounts them at the same paths.
	KcpAuthenticationDir = "/etc/kcp/authentication"
	// ServiceAccountKeysDir holds one directory per shard whose service-account public key a
	// component verifies tokens with; the front proxy mounts them at the same paths.
	ServiceAccountKeysDir = KcpTLSDir + "/service-account-keys"
	// EtcdTLSDir holds the etcd client TLS Secret, in a shard and a cache server.
	EtcdTLSDir = "/etc/etcd/tls"
	// CacheKubeconfigDir holds a shard's kubeconfig toward its CacheServer.
	CacheKubeconfigDir = "/etc/cache-server/kubeconfig"
)

// KcpKubeconfigIdentities are the identities whose kubeconfig a shard mounts at
// KcpKubeconfigDir(identity).
var KcpKubeconfigIdentities = []string{"logical-cluster-admin", "external-logical-cluster-admin", "client"}

// KcpKubeconfigDir is where the kubeconfig Secret of identity is mounted in the kcp container.
func KcpKubeconfigDir(identity string) string {
	return "/etc/kcp/" + identity + "-kubeconfig"
}

// FrontProxyDir holds everything the kcp-front-proxy container mounts, except what it shares
// with kcp: the OIDC CA, the authentication Secrets and the service-account keys.
const FrontProxyDir = "/etc/kcp-front-proxy"

// Directories in the cache-server container.
const (
	// CacheServerTLSDir holds the cache server's serving certificate and client CA.
	CacheServerTLSDir = "/etc/cache-server/tls"
	// EmbeddedEtcdDir holds the data of the cache server's embedded etcd.
	EmbeddedEtcdDir = "/var/etcd"
)

// Directories in the containers of a VirtualWorkspace's pod.
const (
	// VirtualWorkspaceDir holds everything the controllers mount into the virtual-workspaces
	// container, and into each init container, which inherits the server's mounts: the
	// serving and client certificates, the CAs, and the kubeconfigs toward the shard and
	// the cache. One base directory, apart from /etc/kcp, keeps these paths from ever
	// colliding with a shard's if both are read side by side.
	VirtualWorkspaceDir = "/etc/kcp-virtual-workspaces"
	// VirtualWorkspaceInitKubeconfigDir is where an init container's own kubeconfigSecretRef
	// is mounted. It is kcp-operator's documented path, which init containers name in their
	// args (--kubeconfig=/etc/kcp/init-kubeconfig/kubeconfig), so that its manifests keep
	// working unchanged.
	VirtualWorkspaceInitKubeconfigDir = "/etc/kcp/init-kubeconfig"
	// VirtualWorkspaceVolumePrefix begins the name of every volume the controllers add to a
	// VirtualWorkspace's pod. Volume names are the pod's, shared by all its containers, so
	// validation keeps the user's volumes off it: no extra volume may take the place of one
	// of them, and no init container's mount may name one and reach a key not meant for it.
	VirtualWorkspaceVolumePrefix = "kcp-"
)

// KcpServer are the directories the controllers mount into a RootShard's or Shard's kcp
// container: an extra mount at, under or above one of them would hide what kcp reads there.
func KcpServer() []string {
	dirs := []string{KcpTLSDir, KcpOIDCCADir, KcpAuditDir, KcpAuthorizationDir, KcpAuthenticationDir, EtcdTLSDir, CacheKubeconfigDir}
	for _, identity := range KcpKubeconfigIdentities {
		dirs = append(dirs, KcpKubeconfigDir(identity))
	}
	return dirs
}

// FrontProxy are the directories the controllers mount into the kcp-front-proxy container.
func FrontProxy() []string {
	return []string{FrontProxyDir, KcpOIDCCADir, KcpAuthenticationDir, ServiceAccountKeysDir}
}

// CacheServer are the directories the controllers mount into the cache-server container.
func CacheServer() []string {
	return []string{CacheServerTLSDir, EmbeddedEtcdDir, EtcdTLSDir}
}

// VirtualWorkspace are the directories the controllers mount into a VirtualWorkspace's
// virtual-workspaces container.
func VirtualWorkspace() []string {
	return []string{VirtualWorkspaceDir}
}

// VirtualWorkspaceInit are the directories the controllers mount into each init container
// of a VirtualWorkspace: the server's, and the container's own kubeconfig.
func VirtualWorkspaceInit() []string {
	return []string{VirtualWorkspaceDir, VirtualWorkspaceInitKubeconfigDir}
}

// Overlaps reports the reserved directory that dir is at, under or above, if any: a mount
// there would hide the reserved directory or be hidden by it. dir must be clean and absolute.
func Overlaps(dir string, reserved []string) (string, bool) {
	for _, r := range reserved {
		if dir == r || within(dir, r) || within(r, dir) {
			return r, true
		}
	}
	return "", false
}

// within reports whether dir is strictly below parent.
func within(dir, parent string) bool {
	if parent == "/" {
		return dir != "/"
	}
	return len(dir) > len(parent) && dir[:len(parent)] == parent && dir[len(parent)] == '/'
}
