package frontproxy

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
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
	return []secretMount{
		{volume: "serving", secret: f.certName("server"), dir: servingDir},
		{volume: "kubeconfig", secret: f.DynamicKubeconfigName(), dir: kubeconfigDir},
		{volume: "kubeconfig-client", secret: f.certName("kubeconfig"), dir: kubeconfigClient},
		{volume: "requestheader", secret: f.certName("requestheader"), dir: requestHeaderDir},
		{volume: "client-ca", secret: kcp.MergedClientCAName(f.RootShard), dir: clientCADir, onlyCert: true},
		{volume: "ca-server", secret: pki.CAName(rs, pki.ServerCA), dir: serverCADir, onlyCert: true},
	}
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

// Deployment builds the front proxy's Deployment. current is the Deployment as it is now (nil
// when absent), whose replica count is kept when the spec sets none; mountsHash is
// workload.SecretsHash of the mounted Secrets and ConfigMap.
func (f FrontProxy) Deployment(current *appsv1.Deployment, mountsHash string) *appsv1ac.DeploymentApplyConfiguration {
	spec := &f.Spec
	container := corev1ac.Container().
		WithName("kcp-front-proxy").
		WithImage(workload.Image(spec.Image)).
		WithCommand("/kcp-front-proxy").
		WithArgs(f.Args()...).
		WithPorts(corev1ac.ContainerPort().WithName(workload.PortName).WithContainerPort(6443).WithProtocol("TCP")).
		WithSecurityContext(workload.SecurityContext())
	workload.Probes(container)
	workload.Resources(container, spec.Resources)

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
	for i := range spec.ExtraVolumes {
		podSpec.WithVolumes(workload.Volume(&spec.ExtraVolumes[i]))
	}
	for i := range spec.ExtraVolumeMounts {
		container.WithVolumeMounts(workload.VolumeMount(&spec.ExtraVolumeMounts[i]))
	}
	if spec.Image != nil {
		for _, ref := range spec.Image.ImagePullSecrets {
			podSpec.WithImagePullSecrets(corev1ac.LocalObjectReference().WithName(ref.Name))
		}
	}
	podSpec.WithContainers(container)

	var currentReplicas *int32
	if current != nil {
		currentReplicas = current.Spec.Replicas
	}
	pod := corev1ac.PodTemplateSpec().
		WithLabels(f.SelectorLabels()).
		WithAnnotations(map[string]string{workload.SecretsHashAnnotation: mountsHash})
	d := appsv1ac.Deployment(f.DeploymentName(), f.Namespace).WithLabels(pki.Labels(Kind, f.Name, "front-proxy"))
	workload.ApplyDeploymentTemplate(d, pod, podSpec, spec.DeploymentTemplate)
	return d.WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(workload.Replicas(spec.Replicas, currentReplicas, operatorv1alpha1.DefaultReplicas)).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(f.SelectorLabels())).
		WithTemplate(pod.WithSpec(podSpec)))
}
