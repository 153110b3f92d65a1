package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Deployment assembles a component's Deployment around its container, whose name, command,
// arguments and volume mounts the caller set, and its pod, whose volumes the caller set. It
// adds what every component has: the image, the HTTPS port, the restricted security context,
// the probes and default resources of the component's profile, no ServiceAccount token, the resources, the user's extra volumes, mounts and pull secrets, the replica
// count (kept from current when the spec sets none), the mounts' hash that rolls the pods,
// and the user's template. The pods carry labels and the selector's labels (pki.PodLabels).
func Deployment(name, namespace string, labels, selector map[string]string, spec *operatorv1alpha1.ComponentSpec,
	container *corev1ac.ContainerApplyConfiguration, podSpec *corev1ac.PodSpecApplyConfiguration,
	current *appsv1.Deployment, mountsHash string, profile Profile) *appsv1ac.DeploymentApplyConfiguration {
	container.WithImage(Image(spec.Image)).
		WithPorts(corev1ac.ContainerPort().WithName(PortName).WithContainerPort(6443).WithProtocol("TCP")).
		WithSecurityContext(SecurityContext())
	Probes(container, profile)
	Resources(container, spec.Resources, profile)
	for i := range spec.ExtraVolumes {
		podSpec.WithVolumes(Volume(&spec.ExtraVolumes[i]))
	}
	for i := range spec.ExtraVolumeMounts {
		container.WithVolumeMounts(VolumeMount(&spec.ExtraVolumeMounts[i]))
	}
	if spec.Image != nil {
		for _, ref := range spec.Image.ImagePullSecrets {
			podSpec.WithImagePullSecrets(corev1ac.LocalObjectReference().WithName(ref.Name))
		}
	}
	// No component talks to the host cluster's API, so its pods carry no token of the
	// namespace's ServiceAccount that an image or an extra argument could put to other use.
	podSpec.WithContainers(container).WithAutomountServiceAccountToken(false)

	var currentReplicas *int32
	if current != nil {
		currentReplicas = current.Spec.Replicas
	}
	pod := corev1ac.PodTemplateSpec().
		WithLabels(pki.PodLabels(labels, selector)).
		WithAnnotations(map[string]string{SecretsHashAnnotation: mountsHash})
	d := appsv1ac.Deployment(name, namespace).WithLabels(labels)
	ApplyDeploymentTemplate(d, pod, podSpec, spec.DeploymentTemplate)
	return d.WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(Replicas(spec.Replicas, currentReplicas, operatorv1alpha1.DefaultReplicas)).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(selector)).
		WithTemplate(pod.WithSpec(podSpec)))
}
