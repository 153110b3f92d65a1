package virtualworkspace

import (
	"strconv"

	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// DefaultCommand is the entrypoint of kcp's standalone virtual-workspaces server in kcp's
// image; spec.command names a third-party server instead.
const DefaultCommand = "/virtual-workspaces"

// Args is the server's command line, in one place so that a new kcp release is one edit.
//
// Every server gets what any aggregated API server accepts: serving on 6443, client
// certificates verified by the client CA bundle, the front proxy's request-header identity,
// and its kubeconfig toward kcp, which is also the delegated authentication's: without
// --authentication-kubeconfig that falls back to the in-cluster configuration, and the pods
// carry no ServiceAccount token, so the server would exit. kcp's own server then gets its
// cache, the installation's external URL where its release requires it, the external admin
// identity, and JSON logs where its release has them. The user's extra arguments come last.
func (v VirtualWorkspace) Args() []string {
	kubeconfig := kubeconfigDir + "/" + kcp.KubeconfigKey
	args := []string{
		"--secure-port=6443",
		"--tls-cert-file=" + servingDir + "/tls.crt",
		"--tls-private-key-file=" + servingDir + "/tls.key",
		"--client-ca-file=" + caClientDir + "/tls.crt",
		"--requestheader-client-ca-file=" + caRequestHeaderDir + "/tls.crt",
		"--requestheader-allowed-names=kcp-front-proxy," + kcp.RootShardProxyCommonName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
	}
	level := int32(0)
	if v.Spec.Logging != nil {
		level = v.Spec.Logging.Level
	}
	verbosity := "-v=" + strconv.Itoa(int(level))
	if v.ThirdParty() {
		// Another binary may know none of kcp's flags, and a pflag server exits on one it
		// does not know: the rest is the user's, in extraArgs.
		return append(append(args, verbosity), v.Spec.ExtraArgs...)
	}

	version := v.Version()
	if cache := v.cacheKubeconfig(); cache != "" {
		args = append(args, "--cache-kubeconfig="+cache)
	}
	if version.VirtualWorkspacesShardExternalURL() {
		// Required before kcp v0.31.0, a hidden no-op after.
		args = append(args, "--shard-external-url="+v.Target.ExternalURL())
	}
	if v.HasExternalAdmin() {
		args = append(args, "--external-logical-cluster-admin-kubeconfig="+externalAdminKubeconfigDir+"/"+kcp.KubeconfigKey)
	}
	if version.VirtualWorkspacesJSONLogs() {
		args = append(args, "--logging-format=json")
	}
	args = append(args, verbosity)
	return append(args, v.Spec.ExtraArgs...)
}
