package controller

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

const objectMetricsHeader = `
# HELP kcp_setups_object_condition [ALPHA] The status of an object's condition: one series per status (true, false, unknown), 1 for the current one and 0 for the others.
# TYPE kcp_setups_object_condition gauge
# HELP kcp_setups_objects [ALPHA] Objects of a kind, by phase (Unknown before the first status).
# TYPE kcp_setups_objects gauge
`

// TestObjectMetrics drives Lifecycle.Sync over an object's life: its phase and conditions
// show in the gauges after each write of its status, a condition it drops loses its series,
// and once the object is gone its series are removed and its phase no longer counted.
func TestObjectMetrics(t *testing.T) {
	const kind = "metricstest"
	stored := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{
		Namespace: "team-a", Name: "root", Generation: 1, Finalizers: []string{"operator.kcp.io/" + kind + "-cleanup"},
	}}
	gone := false
	l := Lifecycle[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus]{
		Kind: rootShards(kind),
		Get: func(string, string) (*operatorv1alpha1.RootShard, error) {
			if gone {
				return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "rootshards"}, "root")
			}
			return stored, nil
		},
		UpdateStatus: func(_ context.Context, rs *operatorv1alpha1.RootShard) (*operatorv1alpha1.RootShard, error) {
			stored = rs.DeepCopy()
			return stored, nil
		},
	}
	sync := func(phase operatorv1alpha1.Phase, available metav1.ConditionStatus, certificates bool) {
		t.Helper()
		require.NoError(t, l.Sync(context.Background(), "team-a/root", func(_ context.Context, rs *operatorv1alpha1.RootShard, s *operatorv1alpha1.RootShardStatus) error {
			s.Phase = phase
			l.SetCondition(rs, s, operatorv1alpha1.ConditionAvailable, available, "Test", "")
			if !certificates {
				s.Conditions = s.Conditions[:0:0]
				l.SetCondition(rs, s, operatorv1alpha1.ConditionAvailable, available, "Test", "")
			} else {
				l.SetCondition(rs, s, operatorv1alpha1.ConditionCertificatesReady, metav1.ConditionTrue, "Test", "")
			}
			return nil
		}))
	}
	compare := func(want string) {
		t.Helper()
		require.NoError(t, testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(objectMetricsHeader+want),
			"kcp_setups_objects", "kcp_setups_object_condition"))
	}
	series := func(condition, status string) string {
		var b strings.Builder
		for _, s := range []string{"false", "true", "unknown"} {
			v := "0"
			if s == status {
				v = "1"
			}
			b.WriteString(`kcp_setups_object_condition{condition="` + condition + `",kind="metricstest",name="root",namespace="team-a",status="` + s + `"} ` + v + "\n")
		}
		return b.String()
	}

	sync(operatorv1alpha1.PhaseProvisioning, metav1.ConditionFalse, true)
	compare(series("Available", "false") + series("CertificatesReady", "true") + series("Synced", "true") +
		`kcp_setups_objects{kind="metricstest",phase="Provisioning"} 1
`)

	sync(operatorv1alpha1.PhaseRunning, metav1.ConditionTrue, true)
	compare(series("Available", "true") + series("CertificatesReady", "true") + series("Synced", "true") +
		`kcp_setups_objects{kind="metricstest",phase="Provisioning"} 0
kcp_setups_objects{kind="metricstest",phase="Running"} 1
`)

	// A condition the status no longer has loses its series.
	sync(operatorv1alpha1.PhaseRunning, metav1.ConditionUnknown, false)
	compare(series("Available", "unknown") + series("Synced", "true") +
		`kcp_setups_objects{kind="metricstest",phase="Provisioning"} 0
kcp_setups_objects{kind="metricstest",phase="Running"} 1
`)

	gone = true
	require.NoError(t, l.Sync(context.Background(), "team-a/root", nil))
	compare(`kcp_setups_objects{kind="metricstest",phase="Provisioning"} 0
kcp_setups_objects{kind="metricstest",phase="Running"} 0
`)
}

// TestObjectMetricsOwnPhase: a kind with phases of its own (Kubeconfig) reports them through
// Common.OwnPhase, and an object without a phase yet counts as Unknown.
func TestObjectMetricsOwnPhase(t *testing.T) {
	const kind = "ownphasetest"
	kc := &operatorv1alpha1.Kubeconfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "admin"}}
	l := Lifecycle[*operatorv1alpha1.Kubeconfig, operatorv1alpha1.KubeconfigStatus]{Kind: kubeconfigs(kind)}
	gauge := func(phase string) float64 {
		t.Helper()
		v, err := testutil.GetGaugeMetricValue(objectsByPhase.WithLabelValues(kind, phase))
		require.NoError(t, err)
		return v
	}
	l.recordMetrics(kc)
	require.InDelta(t, 1, gauge("Unknown"), 0)
	kc.Status.Phase = operatorv1alpha1.KubeconfigPhaseReady
	l.recordMetrics(kc)
	require.InDelta(t, 0, gauge("Unknown"), 0)
	require.InDelta(t, 1, gauge("Ready"), 0)
}
