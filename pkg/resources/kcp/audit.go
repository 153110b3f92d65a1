package kcp

import (
	"path"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// Where the audit policy and the audit webhook's kubeconfig are mounted.
const (
	auditPolicyDir  = mountpaths.KcpAuditDir + "/policy"
	auditWebhookDir = mountpaths.KcpAuditDir + "/webhook"
)

// Audit is a shard's spec.audit: the policy file of the user's ConfigMap, and the audit
// webhook's flags with its kubeconfig Secret, the user's.
func Audit(audit *operatorv1alpha1.AuditSpec) workload.Feature {
	var f workload.Feature
	if audit == nil {
		return f
	}
	if p := audit.Policy; p != nil && p.ConfigMap != nil {
		f.Args = append(f.Args, "--audit-policy-file="+path.Join(auditPolicyDir, p.ConfigMap.Key))
		f.Mounts = append(f.Mounts, workload.Mount{Volume: "audit-policy", ConfigMap: p.ConfigMap.Name, Dir: auditPolicyDir, User: true, Field: "policy.configMap"})
	}
	w := audit.Webhook
	if w == nil {
		return f
	}
	args := flags{"--audit-webhook-config-file=" + auditWebhookDir + "/" + KubeconfigKey}
	args.opt("--audit-webhook-mode", w.Mode, w.Mode != "")
	args.opt("--audit-webhook-batch-buffer-size", itoa(w.BatchBufferSize), w.BatchBufferSize != 0)
	args.opt("--audit-webhook-batch-max-size", itoa(w.BatchMaxSize), w.BatchMaxSize != 0)
	args.opt("--audit-webhook-batch-max-wait", durationString(w.BatchMaxWait), w.BatchMaxWait != nil)
	args.opt("--audit-webhook-batch-throttle-enable", "true", w.BatchThrottleEnable)
	args.opt("--audit-webhook-batch-throttle-qps", w.BatchThrottleQPS, w.BatchThrottleQPS != "")
	args.opt("--audit-webhook-batch-throttle-burst", itoa(w.BatchThrottleBurst), w.BatchThrottleBurst != 0)
	args.opt("--audit-webhook-initial-backoff", durationString(w.InitialBackoff), w.InitialBackoff != nil)
	args.opt("--audit-webhook-truncate-enabled", "true", w.TruncateEnabled)
	args.opt("--audit-webhook-truncate-max-batch-size", itoa(w.TruncateMaxBatchSize), w.TruncateMaxBatchSize != 0)
	args.opt("--audit-webhook-truncate-max-event-size", itoa(w.TruncateMaxEventSize), w.TruncateMaxEventSize != 0)
	args.opt("--audit-webhook-version", w.Version, w.Version != "")
	f.Args = append(f.Args, args...)
	f.Mounts = append(f.Mounts, workload.Mount{Volume: "audit-webhook", Secret: w.ConfigSecretName, Dir: auditWebhookDir, User: true, Field: "webhook.configSecretName"})
	return f
}

// flags is a command line that takes some flags only where the spec sets them.
type flags []string

// opt adds flag=value when set.
func (f *flags) opt(flag, value string, set bool) {
	if set {
		*f = append(*f, flag+"="+value)
	}
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }

func durationString(d *metav1.Duration) string {
	if d == nil {
		return ""
	}
	return d.Duration.String()
}
