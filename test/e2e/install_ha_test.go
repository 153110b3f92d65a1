package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	"github.com/kcp-setups/apiserver/test/framework"
)

// TestHighAvailability runs a second server on the stack's etcd: both serve the same data;
// when the leader is killed, the other takes the Lease and finishes five setups, creating
// nothing twice.
func TestHighAvailability(t *testing.T) {
	s := onFaultStack(t)
	ctx := t.Context()
	port, err := s.FreePort()
	require.NoError(t, err)
	second, err := s.StartServerProcess(ctx, "kcp-setups-apiserver-2", port,
		append(append(s.ServingArgs(port), s.DelegationArgs(s.AdminKubeconfig)...), "--etcd-servers="+s.EtcdURL))
	require.NoError(t, err)
	t.Cleanup(second.Stop)

	probe, ns := namespace(t, "ha-probe"), namespace(t, "ha")
	first := clientset.NewForConfigOrDie(s.ServerConfig()).OperatorV1alpha1()
	other := clientset.NewForConfigOrDie(second.Config()).OperatorV1alpha1()
	created, err := first.CacheServers(probe).Create(ctx, &operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	got, err := other.CacheServers(probe).Get(ctx, "probe", metav1.GetOptions{})
	require.NoError(t, err, "both replicas serve the same data")
	assert.Equal(t, created.UID, got.UID)
	// The leader's controller writes to it meanwhile; both replicas read the same versions.
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		a, errA := first.CacheServers(probe).Get(ctx, "probe", metav1.GetOptions{})
		b, errB := other.CacheServers(probe).Get(ctx, "probe", metav1.GetOptions{})
		if assert.NoError(c, errA) && assert.NoError(c, errB) {
			assert.Equal(c, a.ResourceVersion, b.ResourceVersion, "both replicas read the same version (phases %s and %s)", a.Status.Phase, b.Status.Phase)
		}
	}, 30*time.Second, time.Second)

	// One of them leads: the one whose log names the Lease's holder.
	holder := func() string {
		lease, err := s.Kube.CoordinationV1().Leases("kube-system").Get(ctx, "kcp-setups-controllers", metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil {
			return ""
		}
		return *lease.Spec.HolderIdentity
	}
	leads := func(log string) bool {
		h := holder()
		return h != "" && strings.Contains(log, `"Leading: starting the controllers" lease="kube-system/kcp-setups-controllers" identity="`+h+`"`)
	}
	require.Eventually(t, func() bool { return leads(s.ServerLog()) || leads(second.Log()) }, time.Minute, time.Second, "one server leads")
	kill, survivorClient, survivorLog := second.Kill, first, s.ServerLog
	if leads(s.ServerLog()) {
		kill, survivorClient, survivorLog = s.KillServer, other, second.Log
		t.Cleanup(func() { require.NoError(t, s.StartServer(context.Background())) })
	}

	var manifests []string
	for i := range 5 {
		manifests = append(manifests, framework.RootShardManifest(fmt.Sprintf("root-%d", i), "kcp.example.com", 6443))
	}
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, strings.Join(manifests, "---\n")))
	// The leader dies mid-reconcile, without releasing its Lease.
	kill()

	require.Eventually(t, func() bool { return leads(survivorLog()) }, 2*time.Minute, time.Second, "the other server takes the Lease")
	for i := range 5 {
		require.Eventually(t, func() bool {
			rs, err := survivorClient.RootShards(ns).Get(ctx, fmt.Sprintf("root-%d", i), metav1.GetOptions{})
			return err == nil && rs.Status.Phase == operatorv1alpha1.PhaseRunning
		}, 3*time.Minute, time.Second, "root-%d becomes Running", i)
	}
	certs := nonEmptyLines(kubectl(t, "get", "certificates", "-n", ns, "-o", "name"))
	assert.Len(t, certs, 1+5*(1+7+7+3), "bootstrap CA, and per setup the root CA, 7 intermediates (the etcd CAs included), 7 leaves (the mount proxy's and the server's own identity included) and the 3 of the root shard's internal front proxy")
	deployments, err := s.Kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, deployments.Items, 10, "per setup, the root shard's and its internal front proxy's")
	generations := map[string]int64{}
	for _, d := range deployments.Items {
		generations[d.Name] = d.Generation
	}
	assertAppliedOnce(t, ns, generations)
}
