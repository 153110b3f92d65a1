package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestValidateAudit(t *testing.T) {
	const p = "spec.audit"
	webhook := func(mutate func(*operator.AuditWebhookSpec)) *operator.AuditSpec {
		wh := &operator.AuditWebhookSpec{
			ConfigSecretName: "audit-webhook", Mode: "blocking-strict", BatchBufferSize: 100, BatchMaxSize: 10,
			BatchMaxWait: duration("30s"), BatchThrottleQPS: "0.5", BatchThrottleBurst: 5, InitialBackoff: duration("10s"),
			TruncateMaxBatchSize: 1 << 20, TruncateMaxEventSize: 1 << 16, Version: "audit.k8s.io/v1",
		}
		mutate(wh)
		return &operator.AuditSpec{Webhook: wh}
	}
	tests := []struct {
		name  string
		audit *operator.AuditSpec
		want  []wantErr
	}{
		{name: "absent"},
		{name: "webhook", audit: webhook(func(*operator.AuditWebhookSpec) {})},
		{name: "policy", audit: &operator.AuditSpec{Policy: &operator.AuditPolicySpec{ConfigMap: &operator.LocalDataKeyReference{Name: "audit", Key: "policy.yaml"}}}},
		{name: "policy without a ConfigMap", audit: &operator.AuditSpec{Policy: &operator.AuditPolicySpec{}}},
		{
			name:  "policy ConfigMap incomplete",
			audit: &operator.AuditSpec{Policy: &operator.AuditPolicySpec{ConfigMap: &operator.LocalDataKeyReference{}}},
			want:  []wantErr{required(p + ".policy.configMap.name"), required(p + ".policy.configMap.key")},
		},
		{
			name:  "webhook secret missing",
			audit: webhook(func(wh *operator.AuditWebhookSpec) { wh.ConfigSecretName = "" }),
			want:  []wantErr{required(p + ".webhook.configSecretName")},
		},
		{
			name:  "webhook secret not a DNS-1123 subdomain",
			audit: webhook(func(wh *operator.AuditWebhookSpec) { wh.ConfigSecretName = "Audit" }),
			want:  []wantErr{invalid(p + ".webhook.configSecretName")},
		},
		{
			name:  "unknown mode",
			audit: webhook(func(wh *operator.AuditWebhookSpec) { wh.Mode = "async" }),
			want:  []wantErr{notSupported(p+".webhook.mode", `supported values: "batch", "blocking", "blocking-strict"`)},
		},
		{
			name: "negative sizes",
			audit: webhook(func(wh *operator.AuditWebhookSpec) {
				wh.BatchBufferSize, wh.BatchMaxSize, wh.BatchThrottleBurst = -1, -1, -1
				wh.TruncateMaxBatchSize, wh.TruncateMaxEventSize = -1, -1
			}),
			want: []wantErr{
				invalid(p + ".webhook.batchBufferSize"), invalid(p + ".webhook.batchMaxSize"),
				invalid(p + ".webhook.batchThrottleBurst"), invalid(p + ".webhook.truncateMaxBatchSize"),
				invalid(p + ".webhook.truncateMaxEventSize"),
			},
		},
		{
			name:  "QPS not a number",
			audit: webhook(func(wh *operator.AuditWebhookSpec) { wh.BatchThrottleQPS = "fast" }),
			want:  []wantErr{invalid(p+".webhook.batchThrottleQPS", "must be a decimal number")},
		},
		{
			name:  "QPS infinite",
			audit: webhook(func(wh *operator.AuditWebhookSpec) { wh.BatchThrottleQPS = "+Inf" }),
			want:  []wantErr{invalid(p + ".webhook.batchThrottleQPS")},
		},
		{
			name:  "negative QPS",
			audit: webhook(func(wh *operator.AuditWebhookSpec) { wh.BatchThrottleQPS = "-1.5" }),
			want:  []wantErr{invalid(p+".webhook.batchThrottleQPS", "must be greater than or equal to 0")},
		},
		{
			name: "negative durations",
			audit: webhook(func(wh *operator.AuditWebhookSpec) {
				wh.BatchMaxWait, wh.InitialBackoff = duration("-1s"), duration("-1m")
			}),
			want: []wantErr{invalid(p + ".webhook.batchMaxWait"), invalid(p + ".webhook.initialBackoff")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateAudit(tc.audit, field.NewPath("spec", "audit")))
		})
	}
}

func TestValidateAuthorization(t *testing.T) {
	const p = "spec.authorization.webhook"
	webhook := func(mutate func(*operator.AuthorizationWebhookSpec)) *operator.AuthorizationSpec {
		wh := &operator.AuthorizationWebhookSpec{
			ConfigSecretName: "authz", AllowPaths: []string{"/healthz", "/readyz"},
			CacheAuthorizedTTL: duration("5m"), CacheUnauthorizedTTL: duration("30s"), Version: "v1beta1",
		}
		mutate(wh)
		return &operator.AuthorizationSpec{Webhook: wh}
	}
	tests := []struct {
		name  string
		authz *operator.AuthorizationSpec
		want  []wantErr
	}{
		{name: "absent"},
		{name: "no webhook", authz: &operator.AuthorizationSpec{}},
		{name: "webhook", authz: webhook(func(*operator.AuthorizationWebhookSpec) {})},
		{
			name:  "secret missing",
			authz: webhook(func(wh *operator.AuthorizationWebhookSpec) { wh.ConfigSecretName = "" }),
			want:  []wantErr{required(p + ".configSecretName")},
		},
		{
			name:  "relative allow paths",
			authz: webhook(func(wh *operator.AuthorizationWebhookSpec) { wh.AllowPaths = []string{"/ok", "healthz", ""} }),
			want:  []wantErr{invalid(p+".allowPaths[1]", "must start with '/'"), invalid(p + ".allowPaths[2]")},
		},
		{
			name: "negative TTLs",
			authz: webhook(func(wh *operator.AuthorizationWebhookSpec) {
				wh.CacheAuthorizedTTL, wh.CacheUnauthorizedTTL = duration("-1s"), duration("-1s")
			}),
			want: []wantErr{invalid(p + ".cacheAuthorizedTTL"), invalid(p + ".cacheUnauthorizedTTL")},
		},
		{
			name:  "unknown version",
			authz: webhook(func(wh *operator.AuthorizationWebhookSpec) { wh.Version = "v2" }),
			want:  []wantErr{notSupported(p+".version", `supported values: "v1", "v1beta1"`)},
		},
		{name: "allow paths and order, kcp-operator's", authz: &operator.AuthorizationSpec{AllowPaths: []string{"/healthz", "/openapi/*"},
			Order: []string{"AlwaysAllowPaths", "AlwaysAllowGroups", "Webhook", "RBAC"}}},
		{
			name: "allow paths in both places",
			authz: func() *operator.AuthorizationSpec {
				a := webhook(func(*operator.AuthorizationWebhookSpec) {})
				a.AllowPaths = []string{"/healthz"}
				return a
			}(),
			want: []wantErr{forbidden(p+".allowPaths", "may not be set together with spec.authorization.allowPaths")},
		},
		{
			name:  "bad allow paths",
			authz: &operator.AuthorizationSpec{AllowPaths: []string{"metrics", "/a*b", "/ok*"}},
			want: []wantErr{invalid("spec.authorization.allowPaths[0]", "must start with '/'"),
				invalid("spec.authorization.allowPaths[1]", "may have a '*' only at its end")},
		},
		{
			name:  "empty lists are not stored",
			authz: &operator.AuthorizationSpec{AllowPaths: []string{}, Order: []string{}},
			want: []wantErr{invalid("spec.authorization.allowPaths", "leave AlwaysAllowPaths out of spec.authorization.order"),
				invalid("spec.authorization.order", "refuse every request")},
		},
		{
			name:  "unknown and repeated authorizers",
			authz: &operator.AuthorizationSpec{Order: []string{"RBAC", "Node", "RBAC"}},
			want: []wantErr{notSupported("spec.authorization.order[1]", `"AlwaysAllowGroups", "AlwaysAllowPaths", "RBAC", "Webhook"`),
				duplicate("spec.authorization.order[2]")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateAuthorization(tc.authz, field.NewPath("spec", "authorization")))
		})
	}
}
