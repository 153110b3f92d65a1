package hostcluster

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// EtcdBackupAgent applies a managed etcd's backup agent when its spec asks for a backup: the
// volume store's claim (created once, never changed, never owned: the snapshots outlive
// their owner), the S3 store's CA bundle, the agent's Service, and its Deployment once the
// Secrets it mounts exist. Without --etcd-agent-image nothing is applied, and it answers
// false.
func (w *Writes) EtcdBackupAgent(e *etcd.Cluster) bool {
	if e == nil || e.Backup() == nil || w.err != nil {
		return true
	}
	if w.host.EtcdAgentImage == "" {
		return false
	}
	e.AgentImage = w.host.EtcdAgentImage
	if claim := e.SnapshotClaim(); claim != nil && w.plan == nil {
		w.Do(func(ctx context.Context) (int, error) {
			existing, err := w.host.Kube.CoreV1().PersistentVolumeClaims(e.Namespace).Get(ctx, *claim.Name, metav1.GetOptions{})
			switch {
			case err == nil:
				// Another's claim of that name is not the owner's store: the agent would write
				// into it, so it is refused rather than used.
				if uid := existing.Labels[pki.LabelOwnerUID]; e.OwnerUID != "" && uid != string(e.OwnerUID) {
					return 0, fmt.Errorf("the snapshot claim %s/%s exists and is not this %s's (owner UID %q)", e.Namespace, *claim.Name, e.Kind, uid)
				}
				return 0, nil
			case !apierrors.IsNotFound(err):
				return 0, err
			}
			_, err = w.host.Kube.CoreV1().PersistentVolumeClaims(e.Namespace).Apply(ctx, claim, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
			if err != nil {
				return 0, err
			}
			return 1, nil
		})
	}
	if cm := e.S3CABundle(); cm != nil {
		w.ConfigMap(cm, nil)
	}
	w.Services(e.AgentService())
	w.DeploymentWhenMounted(e.Namespace, e.AgentName(), e.AgentMounts(),
		func(_ *appsv1.Deployment, secretsHash string) *appsv1ac.DeploymentApplyConfiguration {
			return e.AgentDeployment(w.host.EtcdAgentImage, secretsHash)
		})
	return true
}
