package e2e

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/internal/localstack"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
	"github.com/kcp-setups/apiserver/test/framework"
)

// backedUpEtcdSetup is a RootShard NAME whose managed etcd (one member) is backed up as
// BACKUP says.
const backedUpEtcdSetup = `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: NAME
spec:
  external:
    hostname: kcp.example.com
    port: 6443
  etcd:
    managed:
      replicas: 1
      backup:
BACKUP
`

// TestBackupAndRestore: two RootShards, each with a managed etcd (a real member) that keys
// are written to through kcp's client certificate; one is backed up on demand to a volume
// store (the backup subresource), the other on a schedule to S3-compatible object storage
// (versitygw). Each loses its member, its volume and its StatefulSet, names the snapshot to
// restore, and starts from it: every key written before the snapshot is back and none after,
// and, since the PKI is kept, kcp's stand-in serves with the same certificates as before the
// loss and takes a credential minted before it.
func TestBackupAndRestore(t *testing.T) {
	parallel(t, alone)
	t.Run("on demand to a volume", func(t *testing.T) {
		t.Parallel()
		ns := namespace(t, "etcd-backup")
		// On demand, through the subresource: it answers the name, the server takes it.
		backUpLoseAndRestore(t, ns, "saved", "        store:\n          volume: {}", func(string) string { return snapshotOnDemand(t, ns, "saved") })
	})
	t.Run("on a schedule to object storage", func(t *testing.T) {
		t.Parallel()
		ns := namespace(t, "etcd-backup-s3")
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		store, err := localstack.StartS3(ctx, localstack.S3Options{Dir: stack.Path("s3-" + ns)})
		require.NoError(t, err)
		t.Cleanup(store.Stop)
		kubectl(t, "create", "secret", "generic", "s3-credentials", "-n", ns,
			"--from-literal=accessKeyID="+store.AccessKeyID, "--from-literal=secretAccessKey="+store.SecretAccessKey)
		backup := fmt.Sprintf(`        schedule: "* * * * *"
        store:
          s3:
            endpoint: %s
            bucket: %s
            region: %s
            credentialsSecretRef:
              name: s3-credentials
            caBundle: %s`, store.Endpoint, store.Bucket, store.Region, base64.StdEncoding.EncodeToString(store.CAPEM))
		var written time.Time
		name := backUpLoseAndRestore(t, ns, "vault", backup, func(string) string {
			// A scheduled snapshot taken after every key was written (status has seconds).
			written = time.Now().Add(time.Second).Truncate(time.Second)
			var name string
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				for _, s := range etcdStatusOf(t, ns, "vault").Snapshots {
					if !s.OnDemand && !s.Time.Time.Before(written) {
						name = s.Name
					}
				}
				assert.NotEmpty(c, name, "a scheduled snapshot taken after %s", written)
			}, 3*time.Minute, 2*time.Second)
			return name
		})
		assert.FileExists(t, store.DataDir+"/"+store.Bucket+"/"+ns+"/vault/"+name, "in the bucket, under the setup's prefix")
	})
}

// backUpLoseAndRestore applies the RootShard name in ns with backup (the lines under
// spec.etcd.managed.backup), runs its member and the backup agent the server realized, writes
// keys, has take return the name of a snapshot of them, loses the member and its volume and
// restores the snapshot, checks the keys and that the PKI is kept, and returns the snapshot's
// name.
func backUpLoseAndRestore(t *testing.T, ns, name, backup string, take func(ns string) string) string {
	t.Helper()
	members, agent := runBackedUpRootShard(t, ns, name, strings.NewReplacer("NAME", name, "BACKUP", backup).Replace(backedUpEtcdSetup))
	waitForReason(t, ns, "rootshard/"+name, "EtcdBackupReady", "True", "ReplicasAvailable")

	client, tlsConfig := etcdClientWith(t, ns, name+"-etcd-client", members)
	const keys = 2000
	prefix := "/" + name + "/"
	putKeys(t, client, prefix, keys)
	// The PKI as kcp serves it, and a credential minted, before the loss.
	pki := rootShardPKI(t, ns, name)
	ops, err := clientset.NewForConfig(stack.AdminConfig)
	require.NoError(t, err)
	minted, err := ops.OperatorV1alpha1().RootShards(ns).CreateKubeconfig(t.Context(), name,
		&operatorv1alpha1.KubeconfigRequest{Spec: operatorv1alpha1.KubeconfigRequestSpec{Workspace: "root"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	mintedCert, mintedPath := clientCertOf(t, []byte(minted.Status.Kubeconfig))

	snapshot := take(ns)
	waitForSnapshotListed(t, ns, name, snapshot)
	_, err = client.Put(t.Context(), prefix+"after", "written after the snapshot")
	require.NoError(t, err)
	require.NoError(t, client.Close())

	loseEtcdAndRestore(t, ns, name, members, snapshot)

	// The server checks the snapshot through the agent, then creates the StatefulSet with
	// the restore init container.
	var sts *appsv1.StatefulSet
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		got, err := stack.Kube.AppsV1().StatefulSets(ns).Get(t.Context(), name+"-etcd", metav1.GetOptions{})
		require.NoError(c, err)
		restoring, ok := etcd.RestoringSnapshot(got)
		require.True(c, ok, "created with the restore init container")
		assert.Equal(c, snapshot, restoring)
		sts = got
	}, 3*time.Minute, time.Second)
	restored := runRestoringMembers(t, ns, sts, agent)
	waitForReason(t, ns, "rootshard/"+name, "EtcdRestored", "True", "Restored")

	client, err = framework.EtcdClient(restored.ClientURLs(), tlsConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	got, err := client.Get(t.Context(), prefix, clientv3.WithPrefix())
	require.NoError(t, err)
	assert.EqualValues(t, keys, got.Count, "every key written before the snapshot is back, and nothing after it")
	one, err := client.Get(t.Context(), prefix+"01234")
	require.NoError(t, err)
	require.Len(t, one.Kvs, 1)
	assert.Equal(t, "value 1234", string(one.Kvs[0].Value))
	waitForReason(t, ns, "rootshard/"+name, "EtcdReady", "True", "Healthy")

	// The PKI is kept: kcp's stand-in serves with the certificates it had before the loss and
	// takes the credential minted before it.
	after := rootShardPKI(t, ns, name)
	assert.Equal(t, pki.ServingCert, after.ServingCert, "the same serving certificate")
	assert.Equal(t, pki.ClientCA, after.ClientCA, "the same client CAs")
	assert.Equal(t, pki.ServerCA, after.ServerCA, "the same server CAs")
	standIn, err := stack.StartStandIn(t.Context(), after)
	require.NoError(t, err)
	t.Cleanup(standIn.Stop)
	out, err := whoami(t, standIn, mintedPath)
	require.NoError(t, err, out)
	assert.True(t, strings.HasPrefix(out, mintedCert.Subject.CommonName+" "), "the credential minted before the loss: %s", out)
	return snapshot
}

// givenManagedEtcd applies manifest, a RootShard name with a managed etcd, in ns, and runs its
// members once its certificates are issued; a failed test logs the RootShard.
func givenManagedEtcd(t *testing.T, ns, name, manifest string) *framework.EtcdMembers {
	t.Helper()
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, manifest))
	waitFor(t, ns, "rootshard/"+name, "CertificatesReady")
	t.Cleanup(func() {
		if t.Failed() {
			out, err := stack.Kubectl(context.Background(), "get", "rootshard/"+name, "-n", ns, "-o", "yaml")
			t.Logf("rootshard/%s (%v):\n%s", name, err, out)
		}
	})
	return runRealizedEtcd(t, ns, name+"-etcd")
}

// runRealizedAgent runs the backup agent the server realized for the RootShard name's managed
// etcd, against members, until the test ends.
func runRealizedAgent(t *testing.T, ns, name string, members *framework.EtcdMembers) *framework.EtcdAgent {
	t.Helper()
	agent, unforward, err := stack.RunRealizedEtcdAgent(t.Context(), ns, name+"-etcd-backup", members)
	require.NoError(t, err)
	t.Cleanup(agent.Stop)
	t.Cleanup(func() { _ = unforward(context.Background()) })
	return agent
}

// loseEtcdAndRestore has the RootShard name name snapshot to restore, then loses its
// members: their processes, their data, their claims and the StatefulSet.
func loseEtcdAndRestore(t *testing.T, ns, name string, members *framework.EtcdMembers, snapshot string) {
	t.Helper()
	kubectl(t, "patch", "-n", ns, "rootshard/"+name, "--type=merge", "-p",
		`{"spec":{"etcd":{"managed":{"restore":{"snapshot":"`+snapshot+`"}}}}}`)
	members.Stop()
	require.NoError(t, os.RemoveAll(stack.Path("etcd-members", ns+"-"+name+"-etcd")))
	kubectl(t, "delete", "-n", ns, "pvc", "-l", "app.kubernetes.io/instance="+name+",app.kubernetes.io/component=etcd", "--wait=false")
	kubectl(t, "delete", "-n", ns, "statefulset/"+name+"-etcd")
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
	members := givenManagedEtcd(t, ns, name, manifest)
	agent := runRealizedAgent(t, ns, name, members)
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
	assert.True(t, waitForSnapshotListed(t, ns, name, snapshot).OnDemand, "listed as taken on demand")
	return snapshot
}

// waitForSnapshotListed waits until the RootShard name's server took snapshot (nothing is
// pending) and lists it in status.etcd.snapshots with its size and sha256, and returns it.
func waitForSnapshotListed(t *testing.T, ns, name, snapshot string) operatorv1alpha1.EtcdSnapshotInfo {
	t.Helper()
	var listed operatorv1alpha1.EtcdSnapshotInfo
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		status := etcdStatusOf(t, ns, name)
		assert.Nil(c, status.PendingSnapshot, "taken")
		i := slices.IndexFunc(status.Snapshots, func(s operatorv1alpha1.EtcdSnapshotInfo) bool { return s.Name == snapshot })
		if assert.GreaterOrEqual(c, i, 0, "%s listed in status.etcd.snapshots", snapshot) {
			listed = status.Snapshots[i]
			assert.Positive(c, listed.SizeBytes)
			assert.Len(c, listed.SHA256, 64)
		}
	}, 3*time.Minute, time.Second)
	return listed
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
