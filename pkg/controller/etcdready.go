package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
)

var etcdReadyCondition = healthCondition{
	Type: operatorv1alpha1.ConditionEtcdReady,
	Waiting: kcphealth.Result{Status: metav1.ConditionFalse, Reason: operatorv1alpha1.ReasonStatefulSetNotFound,
		Message: "the etcd StatefulSet does not exist yet"},
	NotAskedReasons: []string{operatorv1alpha1.ReasonMembersNotReady},
	Checking:        kcphealth.Result{Status: metav1.ConditionUnknown, Reason: operatorv1alpha1.ReasonEtcdChecking, Message: "asking etcd whether it is healthy"},
	Unreachable:     operatorv1alpha1.ReasonEtcdUnreachable,
	Asking:          "asking etcd whether it is healthy",
	NoDialer:        func(h *hostcluster.Host) bool { return h.NoEtcdDialer },
	EventReason: func(reason string) string {
		switch reason {
		case operatorv1alpha1.ReasonEtcdUnhealthy:
			return "EtcdUnhealthy"
		case operatorv1alpha1.ReasonAlarmNoSpace, operatorv1alpha1.ReasonAlarmCorrupt:
			return "EtcdAlarm" // the message names the alarm and the members that raised it
		}
		return reason
	},
}

// ObserveEtcd sets obj's EtcdReady condition: from its managed etcd's StatefulSet (nil when
// it does not exist) while not every member is ready, then from etcd's own /health, which
// probe asks through Host.KcpHealth at the same bounded rate as kcp's checks. Without a
// poller (unit tests), a StatefulSet with every member ready is all it reports.
func (l Lifecycle[T, S]) ObserveEtcd(ctx context.Context, obj T, status *S, loop *Loop, sts *appsv1.StatefulSet, probe func(context.Context) kcphealth.Result) {
	if sts == nil {
		l.observeEtcdMembers(ctx, obj, status, loop, etcdReadyCondition.Waiting)
		return
	}
	ready, n, want := hostcluster.StatefulSetReady(sts)
	if !ready {
		l.observeEtcdMembers(ctx, obj, status, loop, kcphealth.Result{Status: metav1.ConditionFalse, Reason: operatorv1alpha1.ReasonMembersNotReady,
			Message: fmt.Sprintf("%d of %d etcd members are ready", n, want)})
		return
	}
	if l.Host.Kcp == nil || l.Host.KcpHealth == nil {
		l.setHealth(obj, status, etcdReadyCondition, kcphealth.Result{Status: metav1.ConditionTrue, Reason: operatorv1alpha1.ReasonEtcdHealthy,
			Message: fmt.Sprintf("%d of %d etcd members are ready", n, want)})
		return
	}
	l.observeHealth(ctx, obj, status, loop, etcdReadyCondition, nil, true, probe)
}

func (l Lifecycle[T, S]) observeEtcdMembers(ctx context.Context, obj T, status *S, loop *Loop, r kcphealth.Result) {
	if l.Host.Kcp == nil || l.Host.KcpHealth == nil {
		l.setHealth(obj, status, etcdReadyCondition, r)
		return
	}
	l.observeHealth(ctx, obj, status, loop, etcdReadyCondition, &r, false, nil)
}
