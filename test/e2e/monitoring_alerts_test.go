package e2e

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kcp-setups/apiserver/test/framework"
)

// prometheusRule is the part of a PrometheusRule the test reads.
type prometheusRule struct {
	Spec struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
				Expr  string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// exportedMetrics are the metric families a /metrics answer declares (# TYPE lines), and a
// histogram's or summary's series names too.
func exportedMetrics(metrics string) map[string]bool {
	families := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) (\S+)$`).FindAllStringSubmatch(metrics, -1) {
		families[m[1]] = true
		if m[2] == "histogram" || m[2] == "summary" {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				families[m[1]+suffix] = true
			}
		}
	}
	return families
}

// TestAlertMetricsAreExported parses every expression of artifacts/monitoring's
// PrometheusRule (the chart's is the same, TestChartTemplateEqualsKustomize says) and finds
// each metric it selects on the running servers' /metrics: the kcp_setups_* ones on the
// kcp-setups server, once a setup was reconciled, and the APIService's on kube-apiserver,
// with a series for operator.kcp.io's APIService.
func TestAlertMetricsAreExported(t *testing.T) {
	parallel(t, alone)
	data, err := os.ReadFile(monitoringDir + "/prometheusrule.yaml")
	require.NoError(t, err)
	var rule prometheusRule
	require.NoError(t, sigsyaml.Unmarshal(data, &rule))

	ns := namespace(t, "alerts")
	givenRootShard(t, ns, until("CertificatesReady"))
	// The leader records an object's series right after it writes the status that kubectl
	// saw: scrape until they are there, and say which of the server's families were when not.
	available := `kcp_setups_object_condition{condition="Available",kind="rootshard",name="root",namespace="` + ns + `",status="true"}`
	var serverMetrics string
	if !assert.Eventually(t, func() bool {
		var err error
		serverMetrics, err = stack.ServerGet(t.Context(), "/metrics")
		return err == nil && strings.Contains(serverMetrics, available)
	}, time.Minute, time.Second) {
		var ours []string
		for name := range exportedMetrics(serverMetrics) {
			if strings.HasPrefix(name, "kcp_setups_") {
				ours = append(ours, name)
			}
		}
		sort.Strings(ours)
		t.Fatalf("the server's /metrics has no %s; its kcp_setups_ families: %v", available, ours)
	}
	server := exportedMetrics(serverMetrics)
	// kube-apiserver's gauge of the APIService comes once its availability controller looked
	// at it, which a loaded machine delays: scrape until it is there.
	apiService := `aggregator_unavailable_apiservice{name="v1alpha1.operator.kcp.io"}`
	var kubeMetrics string
	assert.Eventually(t, func() bool {
		kubeMetrics = kubectl(t, "get", "--raw", "/metrics")
		return strings.Contains(kubeMetrics, apiService)
	}, 3*time.Minute, 5*time.Second, "kube-apiserver exports %s", apiService)
	kube := exportedMetrics(kubeMetrics)

	alerts := 0
	for _, group := range rule.Spec.Groups {
		for _, r := range group.Rules {
			alerts++
			names := framework.PromQLMetrics(r.Expr)
			require.NotEmpty(t, names, "%s: %s", r.Alert, r.Expr)
			for _, name := range names {
				if strings.HasPrefix(name, "kcp_setups_") {
					assert.True(t, server[name], "%s: the server exports no %s", r.Alert, name)
				} else {
					assert.True(t, kube[name], "%s: kube-apiserver exports no %s", r.Alert, name)
				}
			}
		}
	}
	assert.Equal(t, 5, alerts, "the four alerts of docs/operations.md and the APIService's")
	assert.Contains(t, serverMetrics, `kcp_setups_object_condition{condition="CertificatesReady",kind="rootshard",name="root",namespace="`+ns+`",status="true"} 1`)
}
