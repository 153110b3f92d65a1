package hostcluster

import (
	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"

	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// DeploymentWhenMountedHeld is DeploymentWhenMounted held back as a kcp server's is while
// its managed etcd is not ready, for the tests of the hostcluster_test package.
func (w *Writes) DeploymentWhenMountedHeld(namespace, name string, mounts []workload.Mount,
	deployment func(current *appsv1.Deployment, secretsHash string) *appsv1ac.DeploymentApplyConfiguration) {
	w.deploymentWhenMounted(namespace, name, mounts, true, deployment)
}
