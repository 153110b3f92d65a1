package framework

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

// EtcdAgent is a managed etcd's backup agent run as a process (localstack.EtcdAgent):
// Stack.RunEtcdBackupAgent runs it, Forward leads its pod's port to it.
type EtcdAgent = localstack.EtcdAgent

// EtcdMembersWith is what members reach beyond their Secrets (localstack.EtcdMembersWith):
// the backup agents their restore init container reads from, the ConfigMaps they mount.
type EtcdMembersWith = localstack.EtcdMembersWith

// EtcdCAs are a RootShard's etcd CAs made for a test (localstack.EtcdCAs).
type EtcdCAs = localstack.EtcdCAs

// NewEtcdCAs makes the etcd CAs of rootShard under dir (localstack.NewEtcdCAs).
func NewEtcdCAs(dir, rootShard string) (*EtcdCAs, error) {
	return localstack.NewEtcdCAs(dir, rootShard)
}

// RunRealizedEtcdAgent waits until the Deployment name exists in namespace (the backup agent
// the server realizes, <base>-etcd-backup) and every Secret and ConfigMap its pod mounts or
// takes a variable from, runs it as a process against members with them as the host cluster
// holds them, and leads its pod's port to it (Forward), so that the server's dialer reaches
// it by its Service. The returned function ends the forward; the agent's Stop (or the
// stack's) stops it.
func (s *Stack) RunRealizedEtcdAgent(ctx context.Context, namespace, name string, members *EtcdMembers) (*EtcdAgent, func(context.Context) error, error) {
	var (
		dep        *appsv1.Deployment
		secrets    map[string]*corev1.Secret
		configMaps map[string]*corev1.ConfigMap
	)
	err := localstack.Poll(ctx, "the Deployment "+namespace+"/"+name+" and what its pod mounts", 3*time.Minute, nil,
		func(ctx context.Context) (bool, error) {
			var err error
			dep, err = s.Kube.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			} else if err != nil {
				return false, err
			}
			secrets, configMaps, err = s.PodSources(ctx, namespace, &dep.Spec.Template.Spec)
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil, err
		})
	if err != nil {
		return nil, nil, err
	}
	agent, err := s.RunEtcdBackupAgent(ctx, dep, secrets, configMaps, members)
	if err != nil {
		return nil, nil, err
	}
	unforward, err := agent.Forward(ctx, s)
	if err != nil {
		agent.Stop()
		return nil, nil, err
	}
	return agent, unforward, nil
}
