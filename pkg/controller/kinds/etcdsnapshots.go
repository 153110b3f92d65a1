package kinds

import (
	"context"
	"fmt"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/etcdsnapshot"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// ObserveEtcdBackup sets obj's EtcdBackupReady condition from its managed etcd e's backup
// agent (absent without a backup) and, with Host.EtcdSnapshots, drives its snapshots
// (docs/etcd.md, "Backups and restore"): the last take's result goes into the status
// etcdStatus points into, with its Events; a pending on-demand snapshot, else a scheduled one
// that is due, is taken through the agent apart from the reconcile; and obj comes back at the
// next schedule time.
func ObserveEtcdBackup[T controller.Object, S any](ctx context.Context, l controller.Lifecycle[T, S], obj T, status *S, loop *controller.Loop,
	e *etcd.Cluster, etcdStatus func(*S) **operatorv1alpha1.ManagedEtcdStatus) {
	runner := l.Host.EtcdSnapshots
	key := e.Namespace + "/" + e.Name()
	if e.Backup() == nil {
		meta.RemoveStatusCondition(l.Common(status).Conditions, operatorv1alpha1.ConditionEtcdBackupReady)
		if runner != nil {
			runner.Forget(key)
		}
		return
	}
	if l.Host.EtcdAgentImage == "" {
		l.SetCondition(obj, status, operatorv1alpha1.ConditionEtcdBackupReady, metav1.ConditionFalse, operatorv1alpha1.ReasonAgentImageMissing,
			fmt.Sprintf("the server runs without --etcd-agent-image: the backup agent %s is not realized and no snapshot is taken", e.AgentName()))
		return
	}
	available, reason, message := l.Host.DeploymentAvailable(e.Namespace, e.AgentName())
	l.SetCondition(obj, status, operatorv1alpha1.ConditionEtcdBackupReady, available, reason, "the backup agent: "+message)
	if runner == nil || l.Host.Kcp == nil || l.Host.NoEtcdDialer {
		return
	}

	s := etcdStatus(status)
	st := &operatorv1alpha1.ManagedEtcdStatus{}
	if *s != nil {
		st = (*s).DeepCopy()
	}
	res, events, taken := runner.Last(key)
	for _, ev := range events {
		l.Recorder.Event(obj, ev.Type, ev.Reason, ev.Message)
	}
	if taken {
		etcdsnapshot.Apply(st, res, snapshotStore(e))
	}
	if *s == nil && !apiequality.Semantic.DeepEqual(st, &operatorv1alpha1.ManagedEtcdStatus{}) || *s != nil && !apiequality.Semantic.DeepEqual(st, *s) {
		*s = st
	}

	now := time.Now()
	requeue := func(after time.Duration) {
		if loop != nil {
			loop.Queue.AddAfter(obj.GetNamespace()+"/"+obj.GetName(), after)
		}
	}
	req := etcdsnapshot.Request{
		Agent: func() (*rest.Config, error) {
			return l.Host.Kcp.Etcd(hostcluster.EtcdAgentEndpoint(e), e.ClientSecret())
		},
		Done: func() { requeue(0) },
	}
	if b := e.Backup(); b.Schedule != "" {
		since := obj.GetCreationTimestamp().Time
		if st.LastScheduleTime != nil && st.LastScheduleTime.After(since) {
			since = st.LastScheduleTime.Time
		}
		due, next, err := etcdsnapshot.Due(etcdsnapshot.Schedule{Cron: b.Schedule, TimeZone: b.TimeZone}, since, now)
		if err != nil {
			// Validation refuses such a schedule: one stored before it is not taken.
			klog.FromContext(ctx).Error(err, "The backup schedule cannot be used", "etcd", key)
		}
		req.Scheduled = due
		if !next.IsZero() {
			requeue(next.Sub(now))
		}
	}
	if p := st.PendingSnapshot; p != nil {
		// Asked for on demand: before a scheduled one, which waits for the next round.
		req.Name, req.Scheduled = p.Name, time.Time{}
	}
	if req.Name == "" && req.Scheduled.IsZero() || available != metav1.ConditionTrue {
		// Nothing due, or the agent is not there to ask: its Deployment's events bring obj back.
		return
	}
	if !runner.Start(ctx, key, req) {
		// One runs (its end brings obj back), or the last failed: after a while.
		requeue(etcdsnapshot.RetryAfter)
	}
}

// snapshotStore is the store e's snapshots are in, as status names it.
func snapshotStore(e *etcd.Cluster) string {
	if e.Backup() != nil && e.Backup().Store.S3 != nil {
		return etcdsnapshot.StoreS3
	}
	return etcdsnapshot.StoreVolume
}
