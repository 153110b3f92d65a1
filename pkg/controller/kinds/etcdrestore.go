package kinds

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/etcdrestore"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup/agent"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// EtcdRestoreStep is what the realize of a managed etcd does for its restore.
type EtcdRestoreStep struct {
	Restoring *etcd.Restoring
	Hold      bool
}

// Apply sets the step on the managed etcd e the realize applies.
func (r EtcdRestoreStep) Apply(e *etcd.Cluster) {
	if e != nil {
		e.Restoring, e.HoldForRestore = r.Restoring, r.Hold
	}
}

// EtcdRestore decides the restore of obj's managed etcd e (spec.etcd.managed.restore; see
// package etcdrestore) before the realize, and answers what sets the EtcdRestored condition
// on the status the realize observes (it removes it without a restore). With check, it asks
// for the snapshot's check when one is needed (a preview does not: it reads the last answer).
func EtcdRestore[T controller.Object, S any](l controller.Lifecycle[T, S], obj T, previous []metav1.Condition, loop *controller.Loop,
	e *etcd.Cluster, check bool) (EtcdRestoreStep, func(status *S)) {
	if e == nil || e.Spec.Restore == nil {
		return EtcdRestoreStep{}, func(status *S) {
			meta.RemoveStatusCondition(l.Common(status).Conditions, operatorv1alpha1.ConditionEtcdRestored)
		}
	}
	r := e.Spec.Restore
	state := etcdrestore.State{Snapshot: r.Snapshot, Previous: meta.FindStatusCondition(previous, operatorv1alpha1.ConditionEtcdRestored)}
	sts, err := l.Host.StatefulSets.StatefulSets(e.Namespace).Get(e.Name())
	if err == nil {
		state.Exists = true
		state.RestoringSnapshot, state.Restoring = etcd.RestoringSnapshot(sts)
		state.Ready, _, _ = hostcluster.StatefulSetReady(sts)
	}
	key := e.Namespace + "/" + e.Name() + "/" + r.Snapshot
	owner := obj.GetNamespace() + "/" + obj.GetName()
	checks := &l.Host.EtcdRestores
	switch {
	case state.Exists:
		checks.Forget(key)
	case check:
		state.Check = checks.Check(key, func(ctx context.Context) error {
			client, err := AgentClient(l.Host, e)
			if err != nil {
				return err
			}
			_, err = client.Verify(ctx, r.Snapshot)
			return err
		}, func() {
			if loop != nil {
				loop.Queue.Add(owner)
			}
		})
	default:
		state.Check = checks.Peek(key)
	}
	d := etcdrestore.Decide(state)
	var step EtcdRestoreStep
	switch {
	case d.Restore:
		step.Restoring = e.OwnRestore(d.Snapshot)
	case d.Hold:
		step.Hold = true
		if after := checks.RequeueAfter(key); check && after > 0 && loop != nil {
			loop.Queue.AddAfter(owner, after+time.Second)
		}
	}
	return step, func(status *S) {
		l.SetCondition(obj, status, operatorv1alpha1.ConditionEtcdRestored, d.Status, d.Reason, d.Message)
	}
}

// AgentClient calls e's backup agent through the server's etcd dialer, with kcp's etcd
// client certificate (of the RootShard's etcd client CA, which the agent trusts and whose CA
// issued the agent's serving certificate).
func AgentClient(host *hostcluster.Host, e *etcd.Cluster) (agent.Client, error) {
	if host.Kcp == nil || host.NoEtcdDialer {
		return agent.Client{}, errors.New("the server reaches no managed etcd (--etcd-dialer=none)")
	}
	config, err := host.Kcp.Etcd(hostcluster.EtcdAgentEndpoint(e), e.ClientSecret())
	if err != nil {
		return agent.Client{}, err
	}
	return agent.ClientFor(config)
}
