package kinds

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/etcdrestore"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup/agent"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// The kinds a restore.from names.
const (
	rootshardKind = "RootShard"
	shardKind     = "Shard"
)

// EtcdRestoreStep is what the realize of a managed etcd does for its restore.
type EtcdRestoreStep struct {
	Restoring *etcd.Restoring
	Hold      bool
	// DropClient deletes the restore client certificate of a restore from another setup's
	// store once every member started from it (or no restore asks for it).
	DropClient bool
}

// Apply sets the step on the managed etcd e the realize applies.
func (r EtcdRestoreStep) Apply(e *etcd.Cluster) {
	if e != nil {
		e.Restoring, e.HoldForRestore, e.DropRestoreClient = r.Restoring, r.Hold, r.DropClient
	}
}

// EtcdRestore decides the restore of obj's managed etcd e (spec.etcd.managed.restore; see
// package etcdrestore) before the realize, and answers what sets the EtcdRestored condition
// on the status the realize observes (it removes it without a restore). With check, it asks
// for the snapshot's check when one is needed (a preview does not: it reads the last answer).
// A restore from another setup's store (restore.from) reads that setup from x.
func EtcdRestore[T controller.Object, S any](l controller.Lifecycle[T, S], x controller.Indexes, obj T, previous []metav1.Condition, loop *controller.Loop,
	e *etcd.Cluster, check bool) (EtcdRestoreStep, func(status *S)) {
	if e == nil {
		return EtcdRestoreStep{}, func(status *S) {
			meta.RemoveStatusCondition(l.Common(status).Conditions, operatorv1alpha1.ConditionEtcdRestored)
		}
	}
	sts, err := l.Host.StatefulSets.StatefulSets(e.Namespace).Get(e.Name())
	if err != nil {
		sts = nil
	}
	// The restore client certificate goes once the StatefulSet no longer restores and every
	// member is ready on the template without it.
	settled := sts == nil
	if sts != nil && etcd.RestoringOf(sts) == nil {
		settled, _, _ = hostcluster.StatefulSetReady(sts)
	}
	if e.Spec.Restore == nil {
		return EtcdRestoreStep{DropClient: settled}, func(status *S) {
			meta.RemoveStatusCondition(l.Common(status).Conditions, operatorv1alpha1.ConditionEtcdRestored)
		}
	}
	r := e.Spec.Restore
	state := etcdrestore.State{Snapshot: r.Snapshot, Previous: meta.FindStatusCondition(previous, operatorv1alpha1.ConditionEtcdRestored)}
	if sts != nil {
		state.Exists = true
		state.RestoringSnapshot, state.Restoring = etcd.RestoringSnapshot(sts)
		state.Ready, _, _ = hostcluster.StatefulSetReady(sts)
	}
	// The store: this etcd's own, or the source setup's (through its agent, with its client
	// certificate), which the check's answers are kept by.
	store := e
	if r.From != nil {
		store, state.SourceErr = RestoreSource(x, e.Namespace, r.From)
	}
	key := e.Namespace + "/" + e.Name() + "/" + r.Snapshot
	if store != nil && store != e {
		key += " from " + store.Namespace + "/" + store.Name()
	}
	owner := obj.GetNamespace() + "/" + obj.GetName()
	checks := &l.Host.EtcdRestores
	switch {
	case state.Exists || state.SourceErr != nil:
		checks.Forget(key)
	case check:
		state.Check = checks.Check(key, func(ctx context.Context) error {
			client, err := AgentClient(l.Host, store)
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
	step := EtcdRestoreStep{DropClient: !d.Restore && !d.Hold && settled}
	switch {
	case d.Restore && state.Exists:
		// The template keeps the restore it was created with until every member started.
		step.Restoring = etcd.RestoringOf(sts)
	case d.Restore && r.From != nil:
		step.Restoring = e.RestoreFrom(store, d.Snapshot)
	case d.Restore:
		step.Restoring = e.OwnRestore(d.Snapshot)
	case d.Hold:
		step.Hold = true
		after := checks.RequeueAfter(key)
		if state.SourceErr != nil {
			// A source that cannot serve yet is looked at again, as a store that did not answer.
			after = checks.RetryAfter()
		}
		if check && after > 0 && loop != nil {
			loop.Queue.AddAfter(owner, after+time.Second)
		}
	}
	return step, func(status *S) {
		l.SetCondition(obj, status, operatorv1alpha1.ConditionEtcdRestored, d.Status, d.Reason, d.Message)
	}
}

// RestoreSource is the managed etcd of the setup a restore.from names in namespace, read from
// the server's caches: a RootShard, or a Shard of a RootShard of the namespace (whose etcd
// client CA issues the members' restore certificate), with a managed etcd whose backup runs
// its agent. Its error says why it cannot serve its store.
func RestoreSource(x controller.Indexes, namespace string, from *operatorv1alpha1.EtcdRestoreSource) (*etcd.Cluster, error) {
	var e *etcd.Cluster
	switch from.Kind {
	case rootshardKind:
		rs, err := RootShard.Lister(x, namespace).Get(from.Name)
		if err != nil {
			return nil, fmt.Errorf("the restore's source RootShard %q: %w", from.Name, err)
		}
		e = rootshard.Etcd(rs)
	case shardKind:
		s, err := Shard.Lister(x, namespace).Get(from.Name)
		if err != nil {
			return nil, fmt.Errorf("the restore's source Shard %q: %w", from.Name, err)
		}
		if s.Spec.RootShard.SecretRef != nil || s.Spec.RootShard.Link != nil {
			return nil, fmt.Errorf("the restore's source Shard %q joins its RootShard through a copy or a link: its etcd client CA is not one of the namespace", from.Name)
		}
		rs, err := RootShard.Lister(x, namespace).Get(controller.ShardRootShard(s))
		if err != nil {
			return nil, fmt.Errorf("the RootShard of the restore's source Shard %q: %w", from.Name, err)
		}
		e = shard.Etcd(s, rs)
	default:
		return nil, fmt.Errorf("the restore's source kind %q is not RootShard or Shard", from.Kind)
	}
	switch {
	case e == nil:
		return nil, fmt.Errorf("the restore's source %s %q uses an external etcd: no backup agent serves its snapshots", from.Kind, from.Name)
	case e.Backup() == nil:
		return nil, fmt.Errorf("the restore's source %s %q has no spec.etcd.managed.backup: no backup agent serves its snapshots", from.Kind, from.Name)
	}
	return e, nil
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
