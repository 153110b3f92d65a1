package kinds

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/etcdmaint"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// ObserveManagedEtcd sets obj's EtcdReady condition from its managed etcd e (nothing when e is
// nil: an external etcd is not the server's to watch), and, with Host.EtcdMaintenance, keeps
// the members in shape in the same rounds (docs/etcd.md, "Defragmentation and alarms") and
// writes what they report to the status etcdStatus points into.
func ObserveManagedEtcd[T controller.Object, S any](ctx context.Context, l controller.Lifecycle[T, S], obj T, status *S, loop *controller.Loop,
	e *etcd.Cluster, etcdStatus func(*S) **operatorv1alpha1.ManagedEtcdStatus) {
	if e == nil {
		return
	}
	defer ObserveEtcdBackup(ctx, l, obj, status, loop, e, etcdStatus)
	sts, err := l.Host.StatefulSets.StatefulSets(e.Namespace).Get(e.Name())
	if err != nil {
		sts = nil
	}
	cluster := func() (*rest.Config, error) { return l.Host.Kcp.Etcd(hostcluster.EtcdEndpoint(e), e.ClientSecret()) }
	maintainer := l.Host.EtcdMaintenance
	if maintainer == nil {
		l.ObserveEtcd(ctx, obj, status, loop, sts, func(ctx context.Context) kcphealth.Result { return kcphealth.Etcd(ctx, cluster) })
		return
	}
	key := e.Namespace + "/" + e.Name()
	target := etcdTarget(l.Host, e, cluster, func() {
		if loop != nil {
			loop.Queue.Add(obj.GetNamespace() + "/" + obj.GetName())
		}
	})
	l.ObserveEtcd(ctx, obj, status, loop, sts, func(probeCtx context.Context) kcphealth.Result {
		return maintainer.Round(ctx, probeCtx, key, target)
	})
	observed, events := maintainer.Observed(key)
	for _, ev := range events {
		l.Recorder.Event(obj, ev.Type, ev.Reason, ev.Message)
	}
	s := etcdStatus(status)
	var current []operatorv1alpha1.EtcdMemberStatus
	if *s != nil {
		current = (*s).Members
	}
	if next := etcdmaint.MemberStatuses(current, observed); !apiequality.Semantic.DeepEqual(next, current) {
		// The snapshots' part of the status is kept: it is the schedule's.
		updated := &operatorv1alpha1.ManagedEtcdStatus{}
		if *s != nil {
			updated = (*s).DeepCopy()
		}
		updated.Members = next
		*s = updated
	}
}

// etcdTarget is what a maintenance round of e asks: the cluster through cluster, each member
// by itself, with kcp's client certificate, and e's policy, its defaults applied.
func etcdTarget(host *hostcluster.Host, e *etcd.Cluster, cluster kcphealth.Config, done func()) etcdmaint.Target {
	d := operatorv1alpha1.EtcdDefragmentation{}
	if e.Spec.Defragmentation != nil {
		d = *e.Spec.Defragmentation.DeepCopy()
	}
	operatorv1alpha1.SetDefaults_EtcdDefragmentation(&d)
	t := etcdmaint.Target{
		Cluster: cluster,
		Policy:  etcdmaint.Policy{ThresholdPercent: *d.ThresholdPercent, MinimumSize: quantity(d.MinimumSize), Quota: e.Quota()},
		Done:    done,
	}
	for i := range e.Replicas() {
		ep := hostcluster.EtcdMemberEndpoint(e, i)
		t.Members = append(t.Members, etcdmaint.MemberTarget{Name: e.MemberName(i),
			Config: func() (*rest.Config, error) { return host.Kcp.Etcd(ep, e.ClientSecret()) }})
	}
	return t
}

func quantity(q *resource.Quantity) int64 {
	if q == nil {
		return 0
	}
	return q.Value()
}
