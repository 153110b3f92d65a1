package kcp

import (
	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// SelectorLabels select the server's pods.
func (s Server) SelectorLabels() map[string]string {
	return pki.KcpSelector(s.Kind, s.Name)
}

// WorkloadLabels are the labels of the server's Deployment and Service, with kcp-operator's
// component: rootshard or shard.
func (s Server) WorkloadLabels() map[string]string {
	component := pki.ShardWorkload
	if s.Kind == RootShardKind {
		component = pki.RootShardWorkload
	}
	return pki.WorkloadLabels(s.Kind, s.Name, component)
}

// Deployment builds the server's Deployment. current is the Deployment as it is now (nil
// when absent), whose replica count is kept when the spec sets none; secretsHash is
// workload.SecretsHash of the mounted Secrets.
func (s Server) Deployment(current *appsv1.Deployment, secretsHash string) *appsv1ac.DeploymentApplyConfiguration {
	all := workload.Features(s.features()...)
	container := corev1ac.Container().WithName("kcp").WithCommand("/kcp").WithArgs(all.Args...)
	podSpec := corev1ac.PodSpec()
	workload.AddMounts(podSpec, container, all.Mounts)
	return workload.Deployment(s.DeploymentName(), s.Namespace, s.WorkloadLabels(), s.SelectorLabels(),
		&s.Spec.ComponentSpec, container, podSpec, current, secretsHash, workload.KcpServer)
}
