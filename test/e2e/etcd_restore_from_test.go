package e2e

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	members, agent := runBackedUpRootShard(t, ns, "source", sourceEtcdSetup)
	t.Cleanup(func() {
		if t.Failed() {
			out, err := stack.Kubectl(context.Background(), "get", "rootshard/copy", "-n", ns, "-o", "yaml")
			t.Logf("rootshard/copy (%v):\n%s", err, out)
		}
	})

	client, sourceTLS := etcdClientWith(t, ns, "source-etcd-client", members)
	const keys = 500
	putKeys(t, client, "/source/", keys)
	require.NoError(t, client.Close())

	name := snapshotOnDemand(t, ns, "source")

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
	restored := runRestoringMembers(t, ns, sts, agent)
	waitForReason(t, ns, "rootshard/copy", "EtcdRestored", "True", "Restored")

	// copy's etcd is of its own CA: its client certificate reads every key, source's is
	// refused.
	copyClient, _ := etcdClientWith(t, ns, "copy-etcd-client", restored)
	t.Cleanup(func() { _ = copyClient.Close() })
	got, err := copyClient.Get(t.Context(), "/source/", clientv3.WithPrefix())
	require.NoError(t, err)
	assert.EqualValues(t, keys, got.Count, "every key of the snapshot")
	one, err := copyClient.Get(t.Context(), "/source/00123")
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
	_, err = foreign.Get(ctx, "/source/00123")
	assert.Error(t, err, "source's client certificate is of another CA than copy's members trust")

	waitForReason(t, ns, "rootshard/copy", "EtcdReady", "True", "Healthy")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := stack.Kube.CoreV1().Secrets(ns).Get(t.Context(), "copy-etcd-restore-client", metav1.GetOptions{})
		assert.Error(c, err, "the restore client certificate of source's CA goes once every member started")
	}, 3*time.Minute, time.Second)
}
