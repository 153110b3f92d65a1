package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"os"
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

const backedUpEtcdSetup = `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: saved
spec:
  external:
    hostname: kcp.example.com
    port: 6443
  etcd:
    managed:
      replicas: 1
      backup:
        store:
          volume: {}
`

// TestBackupOnDemandAndRestoreAfterALostVolume: a RootShard's managed etcd (a real member)
// with a volume store; keys written through kcp's client certificate; a snapshot asked for
// through the backup subresource is taken by the agent the server realized (run as a process)
// and listed in status; the member and its volume are lost; the RootShard names the snapshot
// to restore; the server checks it through the agent, creates the StatefulSet with the restore
// init container, whose restore (run before the member) brings every key back, and
// EtcdRestored turns True.
func TestBackupOnDemandAndRestoreAfterALostVolume(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "etcd-backup")
	members, agent := runBackedUpRootShard(t, ns, "saved", backedUpEtcdSetup)

	client, tlsConfig := etcdClientWith(t, ns, "saved-etcd-client", members)
	const keys = 2000
	putKeys(t, client, "/saved/", keys)

	// On demand, through the subresource: it answers the name, the server takes it.
	name := snapshotOnDemand(t, ns, "saved")
	_, err := client.Put(t.Context(), "/saved/after", "written after the snapshot")
	require.NoError(t, err)
	require.NoError(t, client.Close())

	// The member and its volume are lost; the RootShard names the snapshot.
	kubectl(t, "patch", "-n", ns, "rootshard/saved", "--type=merge", "-p",
		`{"spec":{"etcd":{"managed":{"restore":{"snapshot":"`+name+`"}}}}}`)
	members.Stop()
	require.NoError(t, os.RemoveAll(stack.Path("etcd-members", ns+"-saved-etcd")))
	kubectl(t, "delete", "-n", ns, "pvc", "-l", "app.kubernetes.io/instance=saved,app.kubernetes.io/component=etcd", "--wait=false")
	kubectl(t, "delete", "-n", ns, "statefulset/saved-etcd")

	// The server checks the snapshot through the agent, then creates the StatefulSet with
	// the restore init container.
	var sts *appsv1.StatefulSet
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		got, err := stack.Kube.AppsV1().StatefulSets(ns).Get(t.Context(), "saved-etcd", metav1.GetOptions{})
		require.NoError(c, err)
		snapshot, ok := etcd.RestoringSnapshot(got)
		require.True(c, ok, "created with the restore init container")
		assert.Equal(c, name, snapshot)
		sts = got
	}, 3*time.Minute, time.Second)
	restored := runRestoringMembers(t, ns, sts, agent)
	waitForReason(t, ns, "rootshard/saved", "EtcdRestored", "True", "Restored")

	client, err = framework.EtcdClient(restored.ClientURLs(), tlsConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	got, err := client.Get(t.Context(), "/saved/", clientv3.WithPrefix())
	require.NoError(t, err)
	assert.EqualValues(t, keys, got.Count, "every key written before the snapshot is back, and nothing after it")
	one, err := client.Get(t.Context(), "/saved/01234")
	require.NoError(t, err)
	require.Len(t, one.Kvs, 1)
	assert.Equal(t, "value 1234", string(one.Kvs[0].Value))
	waitForReason(t, ns, "rootshard/saved", "EtcdReady", "True", "Healthy")
}

// etcdStatusOf is the RootShard name's status.etcd.
func etcdStatusOf(t *testing.T, ns, name string) operatorv1alpha1.ManagedEtcdStatus {
	t.Helper()
	var status operatorv1alpha1.ManagedEtcdStatus
	out := kubectl(t, "get", "rootshard/"+name, "-n", ns, "-o", "jsonpath={.status.etcd}")
	if out != "" {
		require.NoError(t, json.Unmarshal([]byte(out), &status))
	}
	return status
}

// runBackedUpRootShard applies manifest, a RootShard name of one member with a backup, in ns,
// and runs its member and its backup agent (as the server realized them) until EtcdReady.
func runBackedUpRootShard(t *testing.T, ns, name, manifest string) (*framework.EtcdMembers, *framework.EtcdAgent) {
	t.Helper()
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, manifest))
	waitFor(t, ns, "rootshard/"+name, "CertificatesReady")
	t.Cleanup(func() {
		if t.Failed() {
			out, err := stack.Kubectl(context.Background(), "get", "rootshard/"+name, "-n", ns, "-o", "yaml")
			t.Logf("rootshard/%s (%v):\n%s", name, err, out)
		}
	})
	members := runRealizedEtcd(t, ns, name+"-etcd")
	agent, unforward, err := stack.RunRealizedEtcdAgent(t.Context(), ns, name+"-etcd-backup", members)
	require.NoError(t, err)
	t.Cleanup(agent.Stop)
	t.Cleanup(func() { _ = unforward(context.Background()) })
	waitForReason(t, ns, "rootshard/"+name, "EtcdReady", "True", "Healthy")
	return members, agent
}

// snapshotOnDemand asks for a snapshot of the RootShard name through the backup subresource
// and answers its name once the server took it and listed it (on demand, with its size and
// sha256) in status.etcd.snapshots.
func snapshotOnDemand(t *testing.T, ns, name string) string {
	t.Helper()
	var request operatorv1alpha1.EtcdSnapshotRequest
	out := kubectl(t, "create", "--raw", "/apis/operator.kcp.io/v1alpha1/namespaces/"+ns+"/rootshards/"+name+"/backup",
		"-f", writeManifest(t, `{"apiVersion":"operator.kcp.io/v1alpha1","kind":"EtcdSnapshotRequest"}`))
	require.NoError(t, json.Unmarshal([]byte(out), &request))
	snapshot := request.Status.Snapshot
	require.NotEmpty(t, snapshot, "the request answers the snapshot's name: %s", out)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		status := etcdStatusOf(t, ns, name)
		assert.Nil(c, status.PendingSnapshot, "taken")
		var listed *operatorv1alpha1.EtcdSnapshotInfo
		for i := range status.Snapshots {
			if status.Snapshots[i].Name == snapshot {
				listed = &status.Snapshots[i]
			}
		}
		if assert.NotNil(c, listed, "listed in status.etcd.snapshots") {
			assert.True(c, listed.OnDemand)
			assert.Positive(c, listed.SizeBytes)
			assert.Len(c, listed.SHA256, 64)
		}
	}, 3*time.Minute, time.Second)
	return snapshot
}

// runRestoringMembers runs the members of sts, a StatefulSet with the restore init container,
// with every Secret its pods mount as the host has it, their restore reading from agent, and
// forwards their pods' ports.
func runRestoringMembers(t *testing.T, ns string, sts *appsv1.StatefulSet, agent *framework.EtcdAgent) *framework.EtcdMembers {
	t.Helper()
	mounted := map[string]*corev1.Secret{}
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			s := hostSecret(t, ns, v.Secret.SecretName)
			mounted[v.Secret.SecretName] = &s
		}
	}
	members, err := stack.RunEtcdMembersWith(t.Context(), sts, mounted, framework.EtcdMembersWith{Agents: []*framework.EtcdAgent{agent}})
	require.NoError(t, err)
	t.Cleanup(members.Stop)
	unforward, err := members.ForwardMembers(t.Context(), stack)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unforward(context.Background()) })
	return members
}

// etcdClientWith is a client of members with the certificate of the host Secret secret, and
// its TLS config.
func etcdClientWith(t *testing.T, ns, secret string, members *framework.EtcdMembers) (*clientv3.Client, *tls.Config) {
	t.Helper()
	s := hostSecret(t, ns, secret)
	tlsConfig, err := framework.EtcdTLSConfig(&s)
	require.NoError(t, err)
	client, err := framework.EtcdClient(members.ClientURLs(), tlsConfig)
	require.NoError(t, err)
	return client, tlsConfig
}

// putKeys writes n keys <prefix><5 digits>, each "value <i>".
func putKeys(t *testing.T, client *clientv3.Client, prefix string, n int) {
	t.Helper()
	for i := range n {
		_, err := client.Put(t.Context(), fmt.Sprintf("%s%05d", prefix, i), fmt.Sprintf("value %d", i))
		require.NoError(t, err)
	}
}
