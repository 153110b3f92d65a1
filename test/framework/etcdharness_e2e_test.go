//go:build e2e

package framework_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kcp-setups/apiserver/pkg/kcpclient"
	"github.com/kcp-setups/apiserver/test/framework"
)

// TestEtcdHarnessRunsAClusterAndForwardsPods proves the harness itself on a managed etcd
// built by hand after the design (framework.NewEtcdFixture), without the server's builders:
// the members run as processes form a cluster that passes test/e2e's AssertEtcdCluster
// (CheckEtcdClusterServes, CheckEtcdSurvivesMemberLoss), and kwok's
// port-forwards lead each pod's client port to its own member, so that the server's
// port-forward dialer reaches etcd's /health with the client certificate.
func TestEtcdHarnessRunsAClusterAndForwardsPods(t *testing.T) {
	ns := namespace(t, "etcd-harness")
	fixture, err := framework.NewEtcdFixture(t.TempDir(), ns, "harness", 3)
	require.NoError(t, err)
	members, err := stack.RunEtcdMembers(t.Context(), fixture.StatefulSet, fixture.Secrets)
	require.NoError(t, err)
	t.Cleanup(members.Stop)

	require.NoError(t, framework.CheckEtcdClusterServes(t.Context(), members, fixture.Client, fixture.Foreign))
	require.NoError(t, framework.CheckEtcdSurvivesMemberLoss(t.Context(), members, fixture.Client, len(members.Members())-1))

	// Pods as the StatefulSet controller would name and label them, on kwok's node.
	for _, m := range members.Members() {
		labels := map[string]string{"statefulset.kubernetes.io/pod-name": m.Name}
		for k, v := range fixture.StatefulSet.Spec.Template.Labels {
			labels[k] = v
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: ns, Labels: labels},
			Spec: corev1.PodSpec{NodeName: framework.FakeNode, Containers: []corev1.Container{{
				Name: "etcd", Image: fixture.StatefulSet.Spec.Template.Spec.Containers[0].Image,
				Ports: fixture.StatefulSet.Spec.Template.Spec.Containers[0].Ports,
			}}},
		}
		_, err := stack.Kube.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	unforward, err := members.ForwardMembers(t.Context(), stack)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unforward(context.Background()) })

	host, err := clientcmd.BuildConfigFromFlags("", stack.AdminKubeconfig)
	require.NoError(t, err)
	dialer, err := kcpclient.New(kcpclient.PortForwardDialer, host)
	require.NoError(t, err)
	good, err := framework.EtcdTLSConfig(fixture.Client)
	require.NoError(t, err)
	// health asks member i's pod for /health through the dialer, verifying the client
	// Service's name, which the server certificate carries.
	health := func(ctx context.Context, i int) (string, error) {
		ep := kcpclient.Endpoint{Namespace: ns, Service: fixture.StatefulSet.Name, Port: 2379,
			Selector: map[string]string{"statefulset.kubernetes.io/pod-name": members.Members()[i].Name}}
		cfg := good.Clone()
		cfg.ServerName = ep.ServerName()
		transport := &http.Transport{
			DialContext:     func(ctx context.Context, _, _ string) (net.Conn, error) { return dialer.Dial(ctx, ep) },
			TLSClientConfig: cfg,
		}
		defer transport.CloseIdleConnections()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+ep.ServerName()+":2379/health", nil)
		if err != nil {
			return "", err
		}
		resp, err := (&http.Client{Transport: transport, Timeout: 20 * time.Second}).Do(req)
		if err != nil {
			return "", err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		return resp.Status + " " + string(body), err
	}
	for i := range members.Members() {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			got, err := health(t.Context(), i)
			require.NoError(c, err)
			assert.Contains(c, got, `"health":"true"`)
		}, time.Minute, time.Second, "pod %d's port 2379 leads to its member", i)
	}
	// Each pod leads to its own member: with member 1 down, its pod's port leads nowhere
	// while the others' still answer.
	members.Kill(1)
	_, err = health(t.Context(), 1)
	require.Error(t, err)
	// Member 1 may have led: the others answer once they elected another leader.
	healthy := func(i int, what string) {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			got, err := health(t.Context(), i)
			require.NoError(c, err)
			assert.Contains(c, got, `"health":"true"`)
		}, time.Minute, time.Second, what)
	}
	healthy(0, "pod 0's member answers while member 1 is down")
	require.NoError(t, members.Start(t.Context(), 1))
	healthy(1, "pod 1's member answers once it is back")
}
