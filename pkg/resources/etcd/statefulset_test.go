package etcd

import (
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestPlainListenersAreLoopback: a member serves nothing in plain HTTP off its pod: every
// listener that is not TLS (metrics and health) is on loopback, and no container port
// publishes it; the probes, which the kubelet runs from outside, use the TLS client port.
func TestPlainListenersAreLoopback(t *testing.T) {
	c := &Cluster{Kind: "rootshard", OwnerName: "root", Base: "root", Namespace: "kcp", ClusterDomain: "cluster.local",
		RootShard: "root", Spec: &operatorv1alpha1.ManagedEtcd{}}
	listeners := 0
	for _, arg := range c.Args() {
		name, value, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if !strings.HasPrefix(name, "listen-") {
			continue
		}
		for _, raw := range strings.Split(value, ",") {
			listeners++
			u, err := url.Parse(raw)
			require.NoError(t, err)
			if u.Scheme != "https" {
				assert.Equal(t, "127.0.0.1", u.Hostname(), "--%s serves plain %s off the pod", name, u.Scheme)
			}
		}
	}
	assert.Equal(t, 3, listeners, "client, peer and metrics")

	container := c.StatefulSet("hash").Spec.Template.Spec.Containers[0]
	for _, p := range container.Ports {
		assert.NotEqual(t, int32(MetricsPort), *p.ContainerPort, "the loopback metrics port is published")
	}
	for name, probe := range map[string]any{"startup": container.StartupProbe, "readiness": container.ReadinessProbe, "liveness": container.LivenessProbe} {
		require.NotNil(t, probe, name)
	}
	assert.Nil(t, container.ReadinessProbe.HTTPGet, "the kubelet cannot reach a loopback listener")
	require.NotNil(t, container.ReadinessProbe.Exec)
	assert.Contains(t, container.ReadinessProbe.Exec.Command, "--endpoints=https://127.0.0.1:2379")
	assert.Nil(t, container.LivenessProbe.HTTPGet)
	assert.Nil(t, container.StartupProbe.HTTPGet)
}

// TestQuota: managed.quota reaches every member as --quota-backend-bytes; without it the
// args stay as they were (etcd's own default, which Quota reports).
func TestQuota(t *testing.T) {
	c := &Cluster{Kind: "rootshard", OwnerName: "root", Base: "root", Namespace: "kcp", RootShard: "root", Spec: &operatorv1alpha1.ManagedEtcd{}}
	for _, arg := range c.Args() {
		assert.NotContains(t, arg, "quota-backend-bytes")
	}
	assert.Equal(t, int64(2<<30), c.Quota())
	q := resource.MustParse("16Mi")
	c.Spec.Quota = &q
	assert.Contains(t, c.Args(), "--quota-backend-bytes=16777216")
	assert.Equal(t, int64(16<<20), c.Quota())
}

// TestDocumentedNetworkPolicySelectsTheMembers: the managed etcd's NetworkPolicy of
// artifacts/networkpolicies selects the members' pods, and lets in their peers, by the
// labels the builders give a RootShard's members, and opens no metrics port.
func TestDocumentedNetworkPolicySelectsTheMembers(t *testing.T) {
	data, err := os.ReadFile("../../../artifacts/networkpolicies/managed-etcd.yaml")
	require.NoError(t, err)
	var policy networkingv1.NetworkPolicy
	require.NoError(t, yaml.UnmarshalStrict(data, &policy))
	c := &Cluster{Kind: "rootshard", OwnerName: "root", Base: "root", Namespace: "kcp", RootShard: "root", Spec: &operatorv1alpha1.ManagedEtcd{}}
	assert.Equal(t, c.SelectorLabels(), policy.Spec.PodSelector.MatchLabels)
	require.Len(t, policy.Spec.Ingress, 2)
	assert.Equal(t, c.SelectorLabels(), policy.Spec.Ingress[1].From[0].PodSelector.MatchLabels, "the peers")
	for _, rule := range policy.Spec.Ingress {
		for _, p := range rule.Ports {
			assert.Contains(t, []int32{ClientPort, PeerPort}, p.Port.IntVal)
		}
	}
}
