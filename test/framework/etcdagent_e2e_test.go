//go:build e2e

package framework_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup/agent"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
	"github.com/kcp-setups/apiserver/test/framework"
)

// typed is an apply configuration of the builders as the object the cluster would hold.
func typed[T any](t *testing.T, applyConfiguration any) *T {
	t.Helper()
	data, err := json.Marshal(applyConfiguration)
	require.NoError(t, err)
	var out T
	require.NoError(t, json.Unmarshal(data, &out))
	return &out
}

// TestEtcdAgentRunsAndForwardsItsPod proves the harness's backup agent on the builders' own
// objects, without the server: with the agent's Deployment, Secrets and snapshot claim in
// the host cluster (as the server would realize them) and a member run for its etcd,
// RunRealizedEtcdAgent runs the agent as a process and leads its pod's port to it, so that
// the server's port-forward dialer, by the agent's Service and selector, with kcp's etcd client
// certificate, takes a snapshot, lists and verifies it.
func TestEtcdAgentRunsAndForwardsItsPod(t *testing.T) {
	ns := namespace(t, "etcd-agent-harness")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	c := &etcd.Cluster{Kind: "rootshard", OwnerName: "root", Base: "root", Namespace: ns, ClusterDomain: "cluster.local",
		RootShard: "root", AgentImage: "registry.example.com/kcp-setups-apiserver:v1",
		Spec: &operatorv1alpha1.ManagedEtcd{Replicas: ptr.To[int32](1), Backup: &operatorv1alpha1.EtcdBackup{}}}
	cas, err := framework.NewEtcdCAs(t.TempDir(), "root")
	require.NoError(t, err)
	secrets, err := cas.Secrets(c)
	require.NoError(t, err)
	members, err := stack.RunEtcdMembers(ctx, typed[appsv1.StatefulSet](t, c.StatefulSet("hash")), secrets)
	require.NoError(t, err)
	t.Cleanup(members.Stop)

	// What the server realizes for the agent.
	for _, s := range secrets {
		_, err := stack.Kube.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	_, err = stack.Kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, typed[corev1.PersistentVolumeClaim](t, c.SnapshotClaim()), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = stack.Kube.AppsV1().Deployments(ns).Create(ctx, typed[appsv1.Deployment](t, c.AgentDeployment("registry.example.com/kcp-setups-apiserver:v1", "hash")), metav1.CreateOptions{})
	require.NoError(t, err)

	backupAgent, unforward, err := stack.RunRealizedEtcdAgent(ctx, ns, c.AgentName(), members)
	require.NoError(t, err)
	t.Cleanup(backupAgent.Stop)
	t.Cleanup(func() { _ = unforward(context.Background()) })

	host, err := clientcmd.BuildConfigFromFlags("", stack.AdminKubeconfig)
	require.NoError(t, err)
	dialer, err := kcpclient.New(kcpclient.PortForwardDialer, host)
	require.NoError(t, err)
	ep := kcpclient.Endpoint{Namespace: ns, Service: c.AgentName(), Port: etcd.AgentPort, Selector: c.AgentSelectorLabels()}
	kcp := secrets[c.ClientSecret()]
	cert, err := tls.X509KeyPair(kcp.Data["tls.crt"], kcp.Data["tls.key"])
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(cas.Client.CertPEM))
	transport := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dialer.Dial(ctx, ep) },
		TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: ep.ServerName(),
			MinVersion: tls.VersionTLS12},
	}
	t.Cleanup(transport.CloseIdleConnections)
	client := agent.Client{URL: ep.URL(), HTTP: &http.Client{Transport: transport, Timeout: time.Minute}}

	// The pod turns Running and Ready on kwok's node a moment after the Deployment.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		listed, err := client.List(ctx)
		require.NoError(c, err)
		assert.Empty(c, listed)
	}, 2*time.Minute, time.Second, "the agent through its pod's port")
	snapshot, err := client.Take(ctx, "")
	require.NoError(t, err, "the agent's log:\n%s", backupAgent.Log())
	listed, err := client.List(ctx)
	require.NoError(t, err)
	require.Len(t, listed, 1)
	assert.Equal(t, snapshot.Name, listed[0].Name)
	verified, err := client.Verify(ctx, snapshot.Name)
	require.NoError(t, err)
	assert.Equal(t, snapshot.SHA256, verified.SHA256)
	assert.FileExists(t, backupAgent.Claims[c.SnapshotClaimName()]+"/"+snapshot.Name, "the volume store is the claim's directory")
}
