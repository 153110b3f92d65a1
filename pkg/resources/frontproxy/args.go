package frontproxy

import (
	"fmt"
	"slices"
	"strings"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// proxyArgs are the flags every kcp-front-proxy the server runs has: its serving
// certificate, its kubeconfigs toward the shards, its path mappings and client CA, and, on a
// kcp release with the mount proxy, the request-header flags: the shards' mount proxies come
// back through the front proxy with the user's identity in X-Remote-* headers, and only the
// proxy's own request-header identity (self) and theirs may assert it.
func proxyArgs(mountProxy bool, self string) []string {
	args := []string{
		"--secure-port=6443",
		"--tls-cert-file=" + servingDir + "/tls.crt",
		"--tls-private-key-file=" + servingDir + "/tls.key",
		"--root-kubeconfig=" + kubeconfigDir + "/" + kcp.KubeconfigKey,
		"--shards-kubeconfig=" + kubeconfigDir + "/" + kcp.KubeconfigKey,
		"--mapping-file=" + configDir + "/" + MappingKey,
		"--client-ca-file=" + clientCADir + "/tls.crt",
	}
	if mountProxy {
		args = append(args,
			"--requestheader-client-ca-file="+requestHeaderCADir+"/tls.crt",
			"--requestheader-allowed-names="+self+","+kcp.MountsProxyCommonName,
			"--requestheader-username-headers=X-Remote-User",
			"--requestheader-group-headers=X-Remote-Group",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-")
	}
	return args
}

// features are the front proxy's settings in the order of its command line and of its
// volumes (docs/WORKLOADS.md): what every kcp-front-proxy has, the groups it drops and passes on,
// authentication and the shards' service-account keys, then the user's extra arguments.
func (f FrontProxy) features() []workload.Feature {
	spec := &f.Spec
	level := int32(0)
	if spec.Logging != nil {
		level = spec.Logging.Level
	}
	return []workload.Feature{
		{Args: proxyArgs(f.Version().MountProxy(), "kcp-front-proxy"), Mounts: f.ownMounts()},
		{Args: groupArgs(spec.Auth, f.Version())},
		f.authentication(),
		f.serviceAccounts(),
		{Args: append([]string{fmt.Sprintf("-v=%d", level)}, spec.ExtraArgs...)},
	}
}

// authentication is the front proxy's OIDC, token webhook and token file, whose Secrets are
// the user's. It reads the FrontProxy alone, so that the watch of users' Secrets can.
func (f FrontProxy) authentication() workload.Feature {
	return kcp.Authentication(f.Spec.Auth)
}

// Args is the kcp-front-proxy command line.
func (f FrontProxy) Args() []string { return workload.Features(f.features()...).Args }

// groupArgs are auth.dropGroups and auth.passOnGroups, as plain comma-separated values:
// kcp-front-proxy does not strip quotes. --authentication-drop-groups replaces the groups the
// release drops by default (system:masters, system:kcp:logical-cluster-admin, …), so the
// user's groups are added to those, never put in their place: a client claiming them would be
// shard admin on every shard behind the proxy.
func groupArgs(auth *operatorv1alpha1.AuthSpec, v kcpversion.Version) []string {
	if auth == nil {
		return nil
	}
	var args []string
	if len(auth.DropGroups) > 0 {
		drop := v.FrontProxyDropGroups()
		for _, g := range auth.DropGroups {
			if !slices.Contains(drop, g) {
				drop = append(drop, g)
			}
		}
		args = append(args, "--authentication-drop-groups="+strings.Join(drop, ","))
	}
	if len(auth.PassOnGroups) > 0 {
		args = append(args, "--authentication-pass-on-groups="+strings.Join(auth.PassOnGroups, ","))
	}
	return args
}

// serviceAccounts is auth.serviceAccount: with it enabled, the front proxy verifies the
// tokens of every shard of its RootShard with its service-account key; without it, none.
func (f FrontProxy) serviceAccounts() workload.Feature {
	if !kcp.ServiceAccountEnabled(f.Spec.Auth) {
		return workload.Feature{}
	}
	keys := kcp.ServiceAccountKeys(f.RootShard, kcp.SortedIssuers(f.ServiceAccountIssuers))
	if len(keys.Args) == 0 {
		return keys
	}
	// The front proxy's ServiceAccount getter reads the root shard only: looking up a
	// token's ServiceAccount would refuse every token of another shard's workspaces.
	keys.Args = append([]string{"--service-account-lookup=false"}, keys.Args...)
	return keys
}
