package kcp

import (
	"path"

	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// SelectorLabels select the shard's pods.
func (s Server) SelectorLabels() map[string]string {
	return map[string]string{pki.LabelInstance: s.Name, pki.LabelComponent: "kcp", pki.OwnerLabel(s.Kind): s.Name}
}

// WorkloadLabels are the labels of the shard's Deployment and Service, with kcp-operator's
// component: rootshard or shard.
func (s Server) WorkloadLabels() map[string]string {
	component := pki.ShardWorkload
	if s.Kind == RootShardKind {
		component = pki.RootShardWorkload
	}
	return pki.WorkloadLabels(s.Kind, s.Name, component)
}

// Deployment builds the shard's Deployment. current is the Deployment as it is now (nil
// when absent), whose replica count is kept when the spec sets none; secretsHash is
// workload.SecretsHash of the mounted Secrets.
func (s Server) Deployment(current *appsv1.Deployment, secretsHash string) *appsv1ac.DeploymentApplyConfiguration {
	container := corev1ac.Container().WithName("kcp").WithCommand("/kcp").WithArgs(s.Args()...)
	podSpec := corev1ac.PodSpec()
	for _, m := range s.mounts() {
		podSpec.WithVolumes(m.asVolume())
		container.WithVolumeMounts(m.asVolumeMount())
	}
	for _, m := range s.optionalMounts() {
		podSpec.WithVolumes(m.volume)
		container.WithVolumeMounts(m.mount)
	}
	return workload.Deployment(s.DeploymentName(), s.Namespace, s.WorkloadLabels(), s.SelectorLabels(),
		&s.Spec.ComponentSpec, container, podSpec, current, secretsHash, workload.KcpServer)
}

// optionalMount is a volume for a configuration file that only some specs have.
type optionalMount struct {
	volume *corev1ac.VolumeApplyConfiguration
	mount  *corev1ac.VolumeMountApplyConfiguration
}

// optionalMounts mount the Secrets of the authentication settings, the other shards'
// service-account public keys, the audit policy and webhook, and the authorization webhook
// configuration, where the spec has them.
func (s Server) optionalMounts() []optionalMount {
	spec := s.Spec
	var out []optionalMount
	secret := func(volume, secretName, dir string) {
		out = append(out, optionalMount{
			volume: corev1ac.Volume().WithName(volume).WithSecret(corev1ac.SecretVolumeSource().WithSecretName(secretName)),
			mount:  corev1ac.VolumeMount().WithName(volume).WithMountPath(dir).WithReadOnly(true),
		})
	}
	for _, m := range append(UsersAuthMounts(spec.Auth), ServiceAccountKeyMounts(s.serviceAccountPeers())...) {
		out = append(out, optionalMount{volume: m.Volume, mount: m.Mount})
	}
	if a := spec.Audit; a != nil {
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
	if a := spec.Authorization; a != nil && a.Webhook != nil {
		secret("authorization-webhook", a.Webhook.ConfigSecretName, path.Clean(authorizationHookDir))
	}
	return out
}

// optionalSecrets are the names of the Secrets of optionalMounts.
func (s Server) optionalSecrets() []string {
	var names []string
	for _, m := range s.optionalMounts() {
		if src := m.volume.Secret; src != nil && src.SecretName != nil {
			names = append(names, *src.SecretName)
		}
	}
	return names
}
