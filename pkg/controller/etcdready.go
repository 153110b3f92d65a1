package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

var etcdReadyCondition = healthCondition{
	Type: operatorv1alpha1.ConditionEtcdReady,
	Waiting: KcpResult{metav1.ConditionFalse, operatorv1alpha1.ReasonStatefulSetNotFound,
		"the etcd StatefulSet does not exist yet"},
	NotAskedReasons: []string{operatorv1alpha1.ReasonMembersNotReady},
	Checking:        KcpResult{metav1.ConditionUnknown, operatorv1alpha1.ReasonEtcdChecking, "asking etcd whether it is healthy"},
	Unreachable:     operatorv1alpha1.ReasonEtcdUnreachable,
	Asking:          "asking etcd whether it is healthy",
	EventReason: func(reason string) string {
		if reason == operatorv1alpha1.ReasonEtcdUnhealthy {
			return "EtcdUnhealthy"
		}
		return reason
	},
}

// ObserveEtcd sets obj's EtcdReady condition: from its managed etcd's StatefulSet (nil when
// it does not exist) while not every member is ready, then from etcd's own /health, which
// probe asks through Host.KcpHealth at the same bounded rate as kcp's checks. Without a
// poller (unit tests), a StatefulSet with every member ready is all it reports.
func (l Lifecycle[T, S]) ObserveEtcd(ctx context.Context, obj T, status *S, loop *Loop, sts *appsv1.StatefulSet, probe func(context.Context) KcpResult) {
	if sts == nil {
		l.observeEtcdMembers(ctx, obj, status, loop, etcdReadyCondition.Waiting)
		return
	}
	ready, n, want := StatefulSetReady(sts)
	if !ready {
		l.observeEtcdMembers(ctx, obj, status, loop, KcpResult{metav1.ConditionFalse, operatorv1alpha1.ReasonMembersNotReady,
			fmt.Sprintf("%d of %d etcd members are ready", n, want)})
		return
	}
	if l.Host.Kcp == nil || l.Host.KcpHealth == nil {
		l.setHealth(obj, status, etcdReadyCondition, KcpResult{metav1.ConditionTrue, operatorv1alpha1.ReasonEtcdHealthy,
			fmt.Sprintf("%d of %d etcd members are ready", n, want)})
		return
	}
	l.observeHealth(ctx, obj, status, loop, etcdReadyCondition, nil, true, probe)
}

// ObserveManagedEtcd sets obj's EtcdReady condition from its managed etcd e (nothing when e is
// nil: an external etcd is not the server's to watch).
func (l Lifecycle[T, S]) ObserveManagedEtcd(ctx context.Context, obj T, status *S, loop *Loop, e *etcd.Cluster) {
	if e == nil {
		return
	}
	sts, err := l.Host.StatefulSets.StatefulSets(e.Namespace).Get(e.Name())
	if err != nil {
		sts = nil
	}
	l.ObserveEtcd(ctx, obj, status, loop, sts, func(ctx context.Context) KcpResult {
		return EtcdHealth(ctx, func() (*rest.Config, error) { return l.Host.Kcp.Etcd(EtcdEndpoint(e), e.ClientSecret()) })
	})
}

func (l Lifecycle[T, S]) observeEtcdMembers(ctx context.Context, obj T, status *S, loop *Loop, r KcpResult) {
	if l.Host.Kcp == nil || l.Host.KcpHealth == nil {
		l.setHealth(obj, status, etcdReadyCondition, r)
		return
	}
	l.observeHealth(ctx, obj, status, loop, etcdReadyCondition, &r, false, nil)
}

// EtcdHealth asks an etcd cluster's /health on its client port: Healthy when it answers
// {"health":"true"}, Unhealthy with etcd's reason otherwise, or why it could not be asked.
func EtcdHealth(ctx context.Context, config KcpConfig) KcpResult {
	const what = "asking etcd's /health"
	unreachable := func(err error) KcpResult {
		return KcpResult{metav1.ConditionFalse, operatorv1alpha1.ReasonEtcdUnreachable,
			truncate(fmt.Sprintf("%s: etcd cannot be reached: %v", what, err))}
	}
	cfg, err := config()
	if err != nil {
		if r := KcpFailure(what, err); r.Reason == operatorv1alpha1.ReasonWaitingForCredentials {
			return r
		}
		return unreachable(err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return unreachable(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/health", nil)
	if err != nil {
		return unreachable(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return unreachable(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if err != nil {
		return unreachable(err)
	}
	var health struct {
		Health string `json:"health"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(body, &health); err != nil {
		return KcpResult{metav1.ConditionFalse, operatorv1alpha1.ReasonEtcdUnhealthy,
			truncate(fmt.Sprintf("etcd's /health answered %d, not etcd's health: %q", resp.StatusCode, body))}
	}
	if resp.StatusCode == http.StatusOK && health.Health == "true" {
		return KcpResult{metav1.ConditionTrue, operatorv1alpha1.ReasonEtcdHealthy, "every etcd member is ready and etcd's /health answers true"}
	}
	reason := health.Reason
	if reason == "" {
		reason = "no reason given"
	}
	return KcpResult{metav1.ConditionFalse, operatorv1alpha1.ReasonEtcdUnhealthy,
		truncate(fmt.Sprintf("etcd's /health answered %d, health %q: %s", resp.StatusCode, health.Health, reason))}
}
