package frontproxy

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// DeploymentName is the name of the front proxy's Deployment, the same as its Service's.
func (f FrontProxy) DeploymentName() string { return f.ServiceName() }

// secretMount is a Secret mounted read-only into the kcp-front-proxy container.
type secretMount struct {
	volume, secret, dir string
	onlyCert            bool
}

// secretMounts are the Secrets the front proxy's pods mount: all written by the controllers
// or cert-manager, for the front proxy or its RootShard.
func (f FrontProxy) secretMounts() []secretMount {
	mounts := []secretMount{
		{volume: "serving", secret: f.certName("server"), dir: servingDir},
		{volume: "kubeconfig", secret: f.DynamicKubeconfigName(), dir: kubeconfigDir},
		{volume: "kubeconfig-client", secret: f.certName("kubeconfig"), dir: kubeconfigClient},
		{volume: "requestheader", secret: f.certName("requestheader"), dir: requestHeaderDir},
		{volume: "client-ca", secret: f.clientCA(), dir: clientCADir, onlyCert: true},
		// With caBundleSecretRef, the path mappings' backend CA and the dynamic kubeconfig's
		// CA, both files of this directory, are the merged bundle.
		{volume: "ca-server", secret: f.serverCA(), dir: serverCADir, onlyCert: true},
	}
	if f.Version().MountProxy() {
		mounts = append(mounts, secretMount{volume: "ca-requestheader-client", secret: pki.TrustSecretOf(f.RootShard, pki.RequestHeaderClientCA),
			dir: requestHeaderCADir, onlyCert: true})
	}
	return mounts
}

// MountedSecrets are the names of the Secrets the pods mount, sorted: its Deployment is
// created once they all exist, and a change to any of them rolls it.
func (f FrontProxy) MountedSecrets() []string {
	var names []string
	for _, m := range f.secretMounts() {
		names = append(names, m.secret)
	}
	sort.Strings(names)
	return names
}

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
	var names []string
	for _, m := range kcp.UsersAuthMounts(f.Spec.Auth) {
		names = append(names, m.Secret)
	}
	return names
}

// serviceAccountIssuers are the shards whose tokens the front proxy verifies: every one of
// its RootShard's with auth.serviceAccount enabled, none without.
func (f FrontProxy) serviceAccountIssuers() []string {
	if !kcp.ServiceAccountEnabled(f.Spec.Auth) {
		return nil
	}
	return kcp.SortedIssuers(f.ServiceAccountIssuers)
}

// ServiceAccountSecrets are the service-account Secrets whose public keys the pods mount. They
// exist (the controller only names those), and a change to one rolls the Deployment.
func (f FrontProxy) ServiceAccountSecrets() []string {
	var names []string
	for _, name := range f.serviceAccountIssuers() {
		names = append(names, kcp.ServiceAccountSecret(name))
	}
	return names
}

// Deployment builds the front proxy's Deployment. current is the Deployment as it is now (nil
// when absent), whose replica count is kept when the spec sets none; mountsHash is
// workload.SecretsHash of the mounted Secrets and ConfigMap.
func (f FrontProxy) Deployment(current *appsv1.Deployment, mountsHash string) *appsv1ac.DeploymentApplyConfiguration {
	spec := &f.Spec
	container := corev1ac.Container().WithName("kcp-front-proxy").WithCommand("/kcp-front-proxy").WithArgs(f.Args()...)
	podSpec := corev1ac.PodSpec()
	for _, m := range f.secretMounts() {
		src := corev1ac.SecretVolumeSource().WithSecretName(m.secret)
		if m.onlyCert {
			src.WithItems(corev1ac.KeyToPath().WithKey("tls.crt").WithPath("tls.crt"))
		}
		podSpec.WithVolumes(corev1ac.Volume().WithName(m.volume).WithSecret(src))
		container.WithVolumeMounts(corev1ac.VolumeMount().WithName(m.volume).WithMountPath(m.dir).WithReadOnly(true))
	}
	podSpec.WithVolumes(corev1ac.Volume().WithName("config").WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(f.ConfigMapName())))
	container.WithVolumeMounts(corev1ac.VolumeMount().WithName("config").WithMountPath(configDir).WithReadOnly(true))
	for _, m := range append(kcp.UsersAuthMounts(spec.Auth), kcp.ServiceAccountKeyMounts(f.serviceAccountIssuers())...) {
		podSpec.WithVolumes(m.Volume)
		container.WithVolumeMounts(m.Mount)
	}
	return workload.Deployment(f.DeploymentName(), f.Namespace, pki.WorkloadLabels(Kind, f.Name, pki.FrontProxyWorkload), f.SelectorLabels(),
		&spec.ComponentSpec, container, podSpec, current, mountsHash, workload.FrontProxy)
}
