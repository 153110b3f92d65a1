package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	sigsyaml "sigs.k8s.io/yaml"
)

const managedEtcdPolicy = "../../artifacts/networkpolicies/managed-etcd.yaml"

// TestNetworkPolicies: the chart renders no NetworkPolicy by default; with
// networkPolicy.enabled, one for the server (its API port only, from networkPolicy.from)
// and one for the bundled etcd (the client port from the server, both ports from its
// peers), which kube-apiserver accepts, as it does the managed etcd's documented policy. The
// stack has no network plugin that enforces them: what is checked is what they say.
func TestNetworkPolicies(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "netpol")
	policies := func(stream string) map[string]networkingv1.NetworkPolicy {
		out := map[string]networkingv1.NetworkPolicy{}
		for _, obj := range objectsOf(t, stream) {
			if obj["kind"] != "NetworkPolicy" {
				continue
			}
			var p networkingv1.NetworkPolicy
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &p))
			out[p.Name] = p
		}
		return out
	}
	assert.Empty(t, policies(helm(t, "template", "kcp-setups", chartDir, "--namespace", ns)), "off by default")

	rendered := helm(t, "template", "kcp-setups", chartDir, "--namespace", ns, "--set", "networkPolicy.enabled=true",
		"--set", "networkPolicy.from[0].ipBlock.cidr=10.0.0.0/8")
	got := policies(rendered)
	require.Len(t, got, 2)
	server := got["kcp-setups"]
	assert.Equal(t, map[string]string{"app.kubernetes.io/name": "kcp-setups"}, server.Spec.PodSelector.MatchLabels)
	assert.Equal(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, server.Spec.PolicyTypes)
	require.Len(t, server.Spec.Ingress, 1)
	require.Len(t, server.Spec.Ingress[0].Ports, 1)
	assert.Equal(t, int32(6443), server.Spec.Ingress[0].Ports[0].Port.IntVal)
	require.Len(t, server.Spec.Ingress[0].From, 1)
	assert.Equal(t, "10.0.0.0/8", server.Spec.Ingress[0].From[0].IPBlock.CIDR)
	etcd := got["etcd"]
	assert.Equal(t, map[string]string{"app.kubernetes.io/name": "etcd"}, etcd.Spec.PodSelector.MatchLabels)
	require.Len(t, etcd.Spec.Ingress, 2)
	assert.Equal(t, map[string]string{"app.kubernetes.io/name": "kcp-setups"}, etcd.Spec.Ingress[0].From[0].PodSelector.MatchLabels)
	require.Len(t, etcd.Spec.Ingress[0].Ports, 1, "the server reaches the client port only")
	assert.Equal(t, int32(2379), etcd.Spec.Ingress[0].Ports[0].Port.IntVal)
	for _, rule := range etcd.Spec.Ingress {
		for _, p := range rule.Ports {
			assert.NotEqual(t, int32(2381), p.Port.IntVal, "the metrics port is loopback only")
		}
	}
	// With an external etcd, only the server's.
	external := policies(helm(t, "template", "kcp-setups", chartDir, "--namespace", ns, "--set", "networkPolicy.enabled=true",
		"--set", "etcd.bundled.enabled=false", "--set", "etcd.external.endpoints={https://etcd:2379}", "--set", "etcd.external.clientSecret=etcd"))
	assert.Len(t, external, 1)
	assert.Contains(t, external, "kcp-setups")

	// kube-apiserver takes them as they are.
	file := filepath.Join(t.TempDir(), "policies.yaml")
	var stream string
	for _, obj := range []string{"kcp-setups", "etcd"} {
		p := got[obj]
		p.APIVersion, p.Kind = "networking.k8s.io/v1", "NetworkPolicy"
		data, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&p)
		require.NoError(t, err)
		stream += toYAML(t, data) + "\n---\n"
	}
	require.NoError(t, os.WriteFile(file, []byte(stream), 0o600))
	out := kubectl(t, "apply", "--dry-run=server", "-n", ns, "-f", file)
	assert.Contains(t, out, "networkpolicy.networking.k8s.io/kcp-setups created (server dry run)")
	out = kubectl(t, "apply", "--dry-run=server", "-n", ns, "-f", managedEtcdPolicy)
	assert.Contains(t, out, "networkpolicy.networking.k8s.io/root-etcd created (server dry run)")

	// The managed etcd's policy selects the members' pods as the builders label them.
	managed := policies(readFile(t, managedEtcdPolicy))
	require.Contains(t, managed, "root-etcd")
	assert.Equal(t, map[string]string{"app.kubernetes.io/component": "etcd", "app.kubernetes.io/instance": "root", "operator.kcp.io/rootshard": "root"},
		managed["root-etcd"].Spec.PodSelector.MatchLabels)
}

func readFile(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	return string(data)
}

func toYAML(t *testing.T, obj map[string]any) string {
	t.Helper()
	data, err := sigsyaml.Marshal(obj)
	require.NoError(t, err)
	return string(data)
}
