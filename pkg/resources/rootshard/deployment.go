package rootshard

import (
	"path"

	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// SelectorLabels select the root shard's pods.
func SelectorLabels(rs *operatorv1alpha1.RootShard) map[string]string {
	return map[string]string{pki.LabelInstance: rs.Name, pki.LabelComponent: "kcp", pki.OwnerLabel(Kind): rs.Name}
}

// Deployment builds the root shard's Deployment. current is the Deployment as it is now (nil
// when absent), whose replica count is kept when the spec sets none; secretsHash is
// workload.SecretsHash of the mounted Secrets.
func Deployment(rs *operatorv1alpha1.RootShard, current *appsv1.Deployment, secretsHash string) *appsv1ac.DeploymentApplyConfiguration {
	labels := pki.Labels(Kind, rs.Name, "kcp")
	container := corev1ac.Container().
		WithName("kcp").
		WithImage(workload.Image(rs.Spec.Image)).
		WithCommand("/kcp").
		WithArgs(Args(rs)...).
		WithPorts(corev1ac.ContainerPort().WithName(workload.PortName).WithContainerPort(6443).WithProtocol("TCP")).
		WithSecurityContext(workload.SecurityContext())
	workload.Probes(container)
	workload.Resources(container, rs.Spec.Resources)

	podSpec := corev1ac.PodSpec()
	for _, m := range mounts(rs) {
		podSpec.WithVolumes(m.asVolume())
		container.WithVolumeMounts(m.asVolumeMount())
	}
	for _, m := range optionalMounts(rs) {
		podSpec.WithVolumes(m.volume)
		container.WithVolumeMounts(m.mount)
	}
	for i := range rs.Spec.ExtraVolumes {
		podSpec.WithVolumes(workload.Volume(&rs.Spec.ExtraVolumes[i]))
	}
	for i := range rs.Spec.ExtraVolumeMounts {
		container.WithVolumeMounts(workload.VolumeMount(&rs.Spec.ExtraVolumeMounts[i]))
	}
	if rs.Spec.Image != nil {
		for _, ref := range rs.Spec.Image.ImagePullSecrets {
			podSpec.WithImagePullSecrets(corev1ac.LocalObjectReference().WithName(ref.Name))
		}
	}
	podSpec.WithContainers(container)

	var currentReplicas *int32
	if current != nil {
		currentReplicas = current.Spec.Replicas
	}
	pod := corev1ac.PodTemplateSpec().
		WithLabels(SelectorLabels(rs)).
		WithAnnotations(map[string]string{workload.SecretsHashAnnotation: secretsHash})
	d := appsv1ac.Deployment(DeploymentName(rs), rs.Namespace).WithLabels(labels)
	workload.ApplyDeploymentTemplate(d, pod, podSpec, rs.Spec.DeploymentTemplate)
	return d.WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(workload.Replicas(rs.Spec.Replicas, currentReplicas, operatorv1alpha1.DefaultReplicas)).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(rs))).
		WithTemplate(pod.WithSpec(podSpec)))
}

// optionalMount is a volume for a configuration file that only some specs have.
type optionalMount struct {
	volume *corev1ac.VolumeApplyConfiguration
	mount  *corev1ac.VolumeMountApplyConfiguration
}

// optionalMounts mount the OIDC CA, the audit policy and webhook, and the authorization
// webhook configuration, where the spec has them.
func optionalMounts(rs *operatorv1alpha1.RootShard) []optionalMount {
	var out []optionalMount
	secret := func(volume, secretName, dir string) {
		out = append(out, optionalMount{
			volume: corev1ac.Volume().WithName(volume).WithSecret(corev1ac.SecretVolumeSource().WithSecretName(secretName)),
			mount:  corev1ac.VolumeMount().WithName(volume).WithMountPath(dir).WithReadOnly(true),
		})
	}
	if a := rs.Spec.Auth; a != nil && a.OIDC != nil && a.OIDC.CAFileRef != nil {
		secret("oidc-ca", a.OIDC.CAFileRef.Name, oidcCADir)
	}
	if a := rs.Spec.Audit; a != nil {
		if a.Policy != nil && a.Policy.ConfigMap != nil {
			out = append(out, optionalMount{
				volume: corev1ac.Volume().WithName("audit-policy").WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(a.Policy.ConfigMap.Name)),
				mount:  corev1ac.VolumeMount().WithName("audit-policy").WithMountPath(auditPolicyDir).WithReadOnly(true),
			})
		}
		if a.Webhook != nil {
			secret("audit-webhook", a.Webhook.ConfigSecretName, auditWebhookDir)
		}
	}
	if a := rs.Spec.Authorization; a != nil && a.Webhook != nil {
		secret("authorization-webhook", a.Webhook.ConfigSecretName, path.Clean(authorizationHookDir))
	}
	return out
}
