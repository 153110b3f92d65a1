package frontproxy

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// DeploymentName is the name of the front proxy's Deployment, the same as its Service's.
func (f FrontProxy) DeploymentName() string { return f.ServiceName() }

// onlyCert projects a CA's tls.crt alone: its key never enters the pod.
var onlyCert = []string{"tls.crt"}

// proxyMounts are what a kcp-front-proxy the server runs mounts, written by the controllers
// or cert-manager for it or its RootShard.
type proxyMounts struct {
	// requestHeaderCA is the Secret of the request-header CA (pki.TrustSecretOf: its trust
	// bundle once rotated, docs/rotation.md).
	requestHeaderCA string
	// certName names the proxy's certificates by their role.
	certName func(role string) string
	// kubeconfig, clientCA and serverCA are the Secrets of its kubeconfig toward the shards,
	// of the client CA bundle it verifies clients by, and of the CAs it verifies the shards
	// by; configMap is its path mappings'.
	kubeconfig, clientCA, serverCA, configMap string
	mountProxy                                bool
}

// mounts are its serving certificate, its kubeconfig toward the shards and the client
// certificate it names, its request-header identity, the client CA bundle, the server CA
// (bundle), on a kcp release with the mount proxy the request-header CA, and the path
// mappings.
func (p proxyMounts) mounts() []workload.Mount {
	ms := []workload.Mount{
		{Volume: "serving", Secret: p.certName("server"), Dir: servingDir},
		{Volume: "kubeconfig", Secret: p.kubeconfig, Dir: kubeconfigDir},
		{Volume: "kubeconfig-client", Secret: p.certName("kubeconfig"), Dir: kubeconfigClient},
		{Volume: "requestheader", Secret: p.certName("requestheader"), Dir: requestHeaderDir},
		{Volume: "client-ca", Secret: p.clientCA, Dir: clientCADir, Keys: onlyCert},
		// With a CA bundle, the path mappings' backend CA and the dynamic kubeconfig's CA,
		// both files of this directory, are the merged bundle.
		{Volume: "ca-server", Secret: p.serverCA, Dir: serverCADir, Keys: onlyCert},
	}
	if p.mountProxy {
		ms = append(ms, workload.Mount{Volume: "ca-requestheader-client", Secret: p.requestHeaderCA,
			Dir: requestHeaderCADir, Keys: onlyCert})
	}
	return append(ms, workload.Mount{Volume: "config", ConfigMap: p.configMap, Dir: configDir})
}

// ownMounts are the front proxy's proxyMounts.
func (f FrontProxy) ownMounts() []workload.Mount {
	return proxyMounts{requestHeaderCA: pki.TrustSecretOf(f.RootShard, pki.RequestHeaderClientCA), certName: f.certName, kubeconfig: f.DynamicKubeconfigName(),
		clientCA: f.clientCA(), serverCA: f.serverCA(), configMap: f.ConfigMapName(), mountProxy: f.Version().MountProxy()}.mounts()
}

// Mounts are the Secrets and ConfigMaps the front proxy's pods mount: its Deployment is
// created once those the controllers and cert-manager write for the front proxy or its
// RootShard exist, and a change to any of them, to the user's authentication Secrets or to
// the shards' service-account keys rolls it.
func (f FrontProxy) Mounts() []workload.Mount { return workload.Features(f.features()...).Mounts }

// BundleSources are the user's Secrets the front proxy's own CA bundles are made of: a
// change to one rebuilds them.
func (f FrontProxy) BundleSources() []string {
	var names []string
	for _, ref := range []*corev1.LocalObjectReference{f.Spec.CABundleSecretRef, f.Spec.ClientCABundleRef} {
		if ref != nil {
			names = append(names, ref.Name)
		}
	}
	return names
}

// UsersSecrets are the Secrets the pods mount that the user provides: the OIDC issuer's CA,
// the token webhook's kubeconfig and the static token file. A change to one rolls the
// Deployment too.
func (f FrontProxy) UsersSecrets() []string {
	return workload.Secrets(f.authentication().Mounts, workload.UsersSecret)
}

// Deployment builds the front proxy's Deployment. current is the Deployment as it is now (nil
// when absent), whose replica count is kept when the spec sets none; mountsHash is
// workload.SecretsHash of the mounted Secrets and ConfigMap.
func (f FrontProxy) Deployment(current *appsv1.Deployment, mountsHash string) *appsv1ac.DeploymentApplyConfiguration {
	all := workload.Features(f.features()...)
	container := corev1ac.Container().WithName("kcp-front-proxy").WithCommand("/kcp-front-proxy").WithArgs(all.Args...)
	podSpec := corev1ac.PodSpec()
	workload.AddMounts(podSpec, container, all.Mounts)
	return workload.Deployment(f.DeploymentName(), f.Namespace, pki.WorkloadLabels(Kind, f.Name, pki.FrontProxyWorkload), f.SelectorLabels(),
		&f.Spec.ComponentSpec, container, podSpec, current, mountsHash, workload.FrontProxy)
}
