package kcphealth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// Etcd asks an etcd cluster's /health on its client port: Healthy when it answers
// {"health":"true"}, Unhealthy with etcd's reason otherwise, or why it could not be asked.
func Etcd(ctx context.Context, config Config) Result {
	const what = "asking etcd's /health"
	unreachable := func(err error) Result {
		return Result{metav1.ConditionFalse, operatorv1alpha1.ReasonEtcdUnreachable,
			truncate(fmt.Sprintf("%s: etcd cannot be reached: %v", what, err))}
	}
	cfg, err := config()
	if err != nil {
		if r := Failure(what, err); r.Reason == operatorv1alpha1.ReasonWaitingForCredentials {
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
		return Result{metav1.ConditionFalse, operatorv1alpha1.ReasonEtcdUnhealthy,
			truncate(fmt.Sprintf("etcd's /health answered %d, not etcd's health: %q", resp.StatusCode, body))}
	}
	if resp.StatusCode == http.StatusOK && health.Health == "true" {
		return Result{metav1.ConditionTrue, operatorv1alpha1.ReasonEtcdHealthy, "every etcd member is ready and etcd's /health answers true"}
	}
	reason := health.Reason
	if reason == "" {
		reason = "no reason given"
	}
	return Result{metav1.ConditionFalse, operatorv1alpha1.ReasonEtcdUnhealthy,
		truncate(fmt.Sprintf("etcd's /health answered %d, health %q: %s", resp.StatusCode, health.Health, reason))}
}
