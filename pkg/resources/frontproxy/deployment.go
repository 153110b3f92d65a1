package frontproxy

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
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
	rs := f.RootShard.Name
	mounts := []secretMount{
		{volume: "serving", secret: f.certName("server"), dir: servingDir},
		{volume: "kubeconfig", secret: f.DynamicKubeconfigName(), dir: kubeconfigDir},
		{volume: "kubeconfig-client", secret: f.certName("kubeconfig"), dir: kubeconfigClient},
		{volume: "requestheader", secret: f.certName("requestheader"), dir: requestHeaderDir},
		{volume: "client-ca", secret: kcp.MergedClientCAName(f.RootShard), dir: clientCADir, onlyCert: true},
		{volume: "ca-server", secret: pki.CAName(rs, pki.ServerCA), dir: serverCADir, onlyCert: true},
	}
	if f.Version().MountProxy() {
		mounts = append(mounts, secretMount{volume: "ca-requestheader-client", secret: pki.CAName(rs, pki.RequestHeaderClientCA),
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

// UsersSecrets are the Secrets the pods mount that the user provides: the OIDC issuer's CA. A
// change to one rolls the Deployment too.
func (f FrontProxy) UsersSecrets() []string {
	if a := f.Spec.Auth; a != nil && a.OIDC != nil && a.OIDC.CAFileRef != nil {
		return []string{a.OIDC.CAFileRef.Name}
	}
	return nil
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
	if a := spec.Auth; a != nil && a.OIDC != nil && a.OIDC.CAFileRef != nil {
		podSpec.WithVolumes(corev1ac.Volume().WithName("oidc-ca").WithSecret(corev1ac.SecretVolumeSource().WithSecretName(a.OIDC.CAFileRef.Name)))
		container.WithVolumeMounts(corev1ac.VolumeMount().WithName("oidc-ca").WithMountPath(kcp.OIDCCADir).WithReadOnly(true))
	}
	return workload.Deployment(f.DeploymentName(), f.Namespace, pki.Labels(Kind, f.Name, "front-proxy"), f.SelectorLabels(),
		&spec.ComponentSpec, container, podSpec, current, mountsHash, workload.FrontProxy)
}
