package operator

import (
	"fmt"
	"net"
	"strconv"
)

// VirtualWorkspaceServiceSuffix is appended to a VirtualWorkspace's name to name its Service
// and Deployment, as kcp-operator names them: front proxies' path mappings name the Service.
const VirtualWorkspaceServiceSuffix = "-virtual-workspace"

// VirtualWorkspacePort is the port a VirtualWorkspace's Service serves on.
const VirtualWorkspacePort = 6443

// The defaults the v1alpha1 defaulting stores, repeated here because this package may not
// import it; a test holds them equal. They matter only for an object that was never stored.
const (
	defaultClusterDomain       = "cluster.local"
	defaultExternalPort  int32 = 6443
)

// VirtualWorkspaceURL is the URL a VirtualWorkspace's server is reached at, and so the URL its
// shard announces for virtual workspaces (--shard-virtual-workspace-url): https on the
// external hostname and port when a hostname is set, else on the in-cluster Service. It takes
// the fields rather than an object so that the internal and the versioned types share it: the
// registry's URL column and the builders must never disagree.
func VirtualWorkspaceURL(name, namespace, clusterDomain, hostname string, port int32) string {
	if hostname != "" {
		if port == 0 {
			port = defaultExternalPort
		}
		return "https://" + net.JoinHostPort(hostname, strconv.Itoa(int(port)))
	}
	if clusterDomain == "" {
		clusterDomain = defaultClusterDomain
	}
	host := fmt.Sprintf("%s%s.%s.svc.%s", name, VirtualWorkspaceServiceSuffix, namespace, clusterDomain)
	return "https://" + net.JoinHostPort(host, strconv.Itoa(VirtualWorkspacePort))
}
