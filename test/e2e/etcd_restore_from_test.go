package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
	"github.com/kcp-setups/apiserver/test/framework"
)

const sourceEtcdSetup = `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: source
spec:
  external:
    hostname: source.example.com
    port: 6443
  etcd:
    managed:
      replicas: 1
      backup:
        store:
          volume: {}
`

// copyEtcdSetup is a new RootShard that starts from a snapshot of source's store, with no
// backup of its own.
const copyEtcdSetup = `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: copy
spec:
  external:
    hostname: copy.example.com
    port: 6443
  etcd:
    managed:
      replicas: 1
      restore:
        snapshot: %s
        from:
          kind: RootShard
          name: source
`

// TestRestoreIntoANewSetupFromAnother: a RootShard "source" (a real member) with a volume
// store; keys written; a snapshot asked for on demand, taken by its agent (run as a process);
// a second RootShard "copy", with its own new PKI and no backup, names that snapshot in
// source's store (restore.from). The server checks it through source's agent, issues copy's
// members a client certificate of source's etcd client CA, and creates copy's StatefulSet with
// the restore init container reading from source's agent; copy's member comes up with every
// key, EtcdRestored turns True, and copy's etcd is of its own CA: source's client certificate
// is refused by it, and the restore client certificate goes.
func TestRestoreIntoANewSetupFromAnother(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "etcd-restore-from")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, sourceEtcdSetup))
	waitFor(t, ns, "rootshard/source", "CertificatesReady")
	t.Cleanup(func() {
		if t.Failed() {
			for _, o := range []string{"rootshard/source", "rootshard/copy"} {
				out, err := stack.Kubectl(context.Background(), "get", o, "-n", ns, "-o", "yaml")
				t.Logf("%s (%v):\n%s", o, err, out)
			}
		}
	})
	members := runRealizedEtcd(t, ns, "source-etcd")
	agent, unforward, err := stack.RunRealizedEtcdAgent(t.Context(), ns, "source-etcd-backup", members)
	require.NoError(t, err)
	t.Cleanup(agent.Stop)
	t.Cleanup(func() { _ = unforward(context.Background()) })
	waitForReason(t, ns, "rootshard/source", "EtcdReady", "True", "Healthy")

	sourceSecret := hostSecret(t, ns, "source-etcd-client")
	sourceTLS, err := framework.EtcdTLSConfig(&sourceSecret)
	require.NoError(t, err)
	client, err := framework.EtcdClient(members.ClientURLs(), sourceTLS)
	require.NoError(t, err)
	const keys = 500
	for i := range keys {
		_, err := client.Put(t.Context(), fmt.Sprintf("/source/%04d", i), fmt.Sprintf("value %d", i))
		require.NoError(t, err)
	}
	require.NoError(t, client.Close())

	var request operatorv1alpha1.EtcdSnapshotRequest
	out := kubectl(t, "create", "--raw", "/apis/operator.kcp.io/v1alpha1/namespaces/"+ns+"/rootshards/source/backup",
		"-f", writeManifest(t, `{"apiVersion":"operator.kcp.io/v1alpha1","kind":"EtcdSnapshotRequest"}`))
	require.NoError(t, json.Unmarshal([]byte(out), &request))
	name := request.Status.Snapshot
	require.NotEmpty(t, name, "the request answers the snapshot's name: %s", out)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		status := etcdStatusOf(t, ns, "source")
		assert.Nil(c, status.PendingSnapshot, "taken")
		listed := false
		for _, s := range status.Snapshots {
			listed = listed || s.Name == name
		}
		assert.True(c, listed, "listed in status.etcd.snapshots")
	}, 3*time.Minute, time.Second)

	// A new setup, with its own PKI, starts from source's snapshot.
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, fmt.Sprintf(copyEtcdSetup, name)))
	var sts *appsv1.StatefulSet
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		got, err := stack.Kube.AppsV1().StatefulSets(ns).Get(t.Context(), "copy-etcd", metav1.GetOptions{})
		require.NoError(c, err)
		r := etcd.RestoringOf(got)
		require.NotNil(c, r, "created with the restore init container")
		assert.Equal(c, name, r.Snapshot)
		assert.Equal(c, "copy-etcd-restore-client", r.ClientSecret)
		sts = got
	}, 3*time.Minute, time.Second)
	mounted := map[string]*corev1.Secret{}
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			s := hostSecret(t, ns, v.Secret.SecretName)
			mounted[v.Secret.SecretName] = &s
		}
	}
	restored, err := stack.RunEtcdMembersWith(t.Context(), sts, mounted, framework.EtcdMembersWith{Agents: []*framework.EtcdAgent{agent}})
	require.NoError(t, err)
	t.Cleanup(restored.Stop)
	unforwardRestored, err := restored.ForwardMembers(t.Context(), stack)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unforwardRestored(context.Background()) })
	waitForReason(t, ns, "rootshard/copy", "EtcdRestored", "True", "Restored")

	// copy's etcd is of its own CA: its client certificate reads every key, source's is
	// refused.
	copySecret := hostSecret(t, ns, "copy-etcd-client")
	copyTLS, err := framework.EtcdTLSConfig(&copySecret)
	require.NoError(t, err)
	copyClient, err := framework.EtcdClient(restored.ClientURLs(), copyTLS)
	require.NoError(t, err)
	t.Cleanup(func() { _ = copyClient.Close() })
	got, err := copyClient.Get(t.Context(), "/source/", clientv3.WithPrefix())
	require.NoError(t, err)
	assert.EqualValues(t, keys, got.Count, "every key of the snapshot")
	one, err := copyClient.Get(t.Context(), "/source/0123")
	require.NoError(t, err)
	require.Len(t, one.Kvs, 1)
	assert.Equal(t, "value 123", string(one.Kvs[0].Value))
	sourceTrust, copyTrust := hostSecret(t, ns, "source-etcd-client-trust"), hostSecret(t, ns, "copy-etcd-client-trust")
	assert.False(t, bytes.Equal(sourceTrust.Data["tls.crt"], copyTrust.Data["tls.crt"]), "copy's etcd client CA is its own")
	foreign, err := framework.EtcdClient(restored.ClientURLs(), sourceTLS)
	require.NoError(t, err)
	t.Cleanup(func() { _ = foreign.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err = foreign.Get(ctx, "/source/0123")
	assert.Error(t, err, "source's client certificate is of another CA than copy's members trust")

	waitForReason(t, ns, "rootshard/copy", "EtcdReady", "True", "Healthy")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := stack.Kube.CoreV1().Secrets(ns).Get(t.Context(), "copy-etcd-restore-client", metav1.GetOptions{})
		assert.Error(c, err, "the restore client certificate of source's CA goes once every member started")
	}, 3*time.Minute, time.Second)
}
