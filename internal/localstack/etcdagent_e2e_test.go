//go:build e2e

package localstack

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup/agent"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// processStack is a stack of processes alone, without a cluster: what RunEtcdMembers and
// RunEtcdBackupAgent need of a stack (a directory, the tools in _output/bin, the processes
// tracked, stopped and shown on failure).
func processStack(t *testing.T) *Stack {
	t.Helper()
	root, err := RepoRoot()
	require.NoError(t, err)
	s := &Stack{Dir: t.TempDir(), binDir: filepath.Join(root, "_output", "bin"), progress: func(string, ...any) {}}
	for _, bin := range []string{"etcd", etcd.AgentCommand} {
		_, err := os.Stat(s.Bin(bin))
		require.NoError(t, err, "run `make tools` and `make build` first")
	}
	t.Cleanup(func() {
		if t.Failed() {
			s.DumpLogs(os.Stderr, 30)
		}
		s.Stop()
	})
	return s
}

// tlsOf is the TLS of a client holding the Secret's certificate, trusting ca.
func tlsOf(t *testing.T, s *corev1.Secret, ca []byte) *tls.Config {
	t.Helper()
	cert, err := tls.X509KeyPair(s.Data["tls.crt"], s.Data["tls.key"])
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca))
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}
}

func etcdClient(t *testing.T, m *EtcdMembers, cfg *tls.Config) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: m.ClientURLs(), TLS: cfg, DialTimeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestBackupAgentAndRestoreRunAsProcesses runs what the builders make for a managed etcd with
// a backup as the pods would run them: the members of a RootShard's StatefulSet, then its
// backup agent's Deployment against them, which takes a snapshot into its claim's directory,
// lists and verifies it; then a Shard's StatefulSet of three members whose restore init
// container reads that snapshot from the agent by its Service's name: every member starts
// from it (a key written before the snapshot is there, one written after is not, the
// revision moved past the snapshot's). Started again on its data, the init container leaves
// the members' data alone; a restore of a snapshot the agent does not have fails the
// member's start with the init container's output.
func TestBackupAgentAndRestoreRunAsProcesses(t *testing.T) {
	s := processStack(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cas := newEtcdCAs(t)
	root := backupCluster("backup", "rootshard", "root", "root", 1)
	secrets := cas.secrets(t, root)
	kcp := tlsOf(t, secrets[root.ClientSecret()], cas.Client.CertPEM)

	members, err := s.RunEtcdMembers(ctx, typed[appsv1.StatefulSet](t, root.StatefulSet("hash")), secrets)
	require.NoError(t, err)
	t.Cleanup(members.Stop)
	kv := etcdClient(t, members, kcp)
	for i := range 200 {
		_, err := kv.Put(ctx, fmt.Sprintf("/registry/keys/%03d", i), fmt.Sprintf("value %d", i))
		require.NoError(t, err)
	}

	dep := typed[appsv1.Deployment](t, root.AgentDeployment("registry.example.com/kcp-setups-apiserver:v1", "hash"))
	backupAgent, err := s.RunEtcdBackupAgent(ctx, dep, secrets, nil, members)
	require.NoError(t, err)
	t.Cleanup(backupAgent.Stop)
	client := agent.Client{URL: backupAgent.URL, HTTP: &http.Client{Transport: &http.Transport{TLSClientConfig: kcp}}}
	snapshot, err := client.Take(ctx, "")
	require.NoError(t, err, "the agent's log:\n%s", backupAgent.Log())
	assert.Regexp(t, `^root-\d{8}-\d{6}$`, snapshot.Name)
	listed, err := client.List(ctx)
	require.NoError(t, err)
	require.Len(t, listed, 1)
	assert.Equal(t, snapshot.Name, listed[0].Name)
	verified, err := client.Verify(ctx, snapshot.Name)
	require.NoError(t, err)
	assert.Equal(t, snapshot.SHA256, verified.SHA256)
	stored, err := os.Stat(filepath.Join(backupAgent.Claims[root.SnapshotClaimName()], snapshot.Name))
	require.NoError(t, err, "the volume store is the claim's directory")
	assert.Equal(t, snapshot.Size, stored.Size())
	_, err = kv.Put(ctx, "/registry/after", "not in the snapshot")
	require.NoError(t, err)

	east := restoringCluster(root.Namespace, "east", 3, snapshot.Name)
	require.Equal(t, root.AgentURL(), east.Restoring.SourceURL)
	eastSecrets := cas.secrets(t, east)
	sts := typed[appsv1.StatefulSet](t, east.StatefulSet("hash"))
	require.Len(t, sts.Spec.Template.Spec.InitContainers, 1, "the builders' restore init container")
	with := EtcdMembersWith{Agents: []*EtcdAgent{backupAgent}}
	restored, err := s.RunEtcdMembersWith(ctx, sts, eastSecrets, with)
	require.NoError(t, err)
	t.Cleanup(restored.Stop)
	eastKV := etcdClient(t, restored, tlsOf(t, eastSecrets[east.ClientSecret()], cas.Client.CertPEM))
	for _, e := range restored.Members() {
		// Each member answers from its own data.
		got, err := eastKV.Get(clientv3.WithRequireLeader(ctx), "/registry/keys/199", clientv3.WithSerializable())
		require.NoError(t, err, e.Name)
		require.Len(t, got.Kvs, 1)
		assert.Equal(t, "value 199", string(got.Kvs[0].Value))
	}
	all, err := eastKV.Get(ctx, "/registry/keys/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	assert.EqualValues(t, 200, all.Count, "every key written before the snapshot")
	after, err := eastKV.Get(ctx, "/registry/after")
	require.NoError(t, err)
	assert.Empty(t, after.Kvs, "a key written after the snapshot is not in it")
	assert.Greater(t, all.Header.Revision, int64(agent.RevisionBump), "the revision moved past the snapshot's")
	for _, e := range restored.Members() {
		log, err := os.ReadFile(s.Path("logs", "etcd-backup-"+e.Name+"-restore.log"))
		require.NoError(t, err)
		assert.Contains(t, string(log), "Restored the snapshot", e.Name)
	}

	// Started again, as new pods on the members' claims: the init container runs and leaves
	// the data alone.
	_, err = eastKV.Put(ctx, "/registry/restored", "kept")
	require.NoError(t, err)
	_ = eastKV.Close()
	restored.Stop()
	// On the same ports, which the members' data names, as the runner starts them again.
	env := restored.env
	env.prior = restored.ports
	again, err := runEtcdMembers(ctx, env, sts, eastSecrets)
	require.NoError(t, err)
	t.Cleanup(again.Stop)
	againKV := etcdClient(t, again, tlsOf(t, eastSecrets[east.ClientSecret()], cas.Client.CertPEM))
	kept, err := againKV.Get(ctx, "/registry/restored")
	require.NoError(t, err)
	require.Len(t, kept.Kvs, 1, "the members run on their data")
	log, err := os.ReadFile(s.Path("logs", "etcd-backup-east-shard-etcd-0-restore.log"))
	require.NoError(t, err)
	assert.Contains(t, string(log), "The member has data: nothing is restored")

	// A snapshot the agent does not have: the init container fails, and so the start.
	missing := restoringCluster(root.Namespace, "gone", 1, "root-20000101-000000")
	_, err = s.RunEtcdMembersWith(ctx, typed[appsv1.StatefulSet](t, missing.StatefulSet("hash")), cas.secrets(t, missing), with)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "init container restore of gone-shard-etcd-0 failed")
	t.Logf("the failed start: %v", err)
	assert.Contains(t, err.Error(), "root-20000101-000000", "the init container's output")
	_, statErr := os.Stat(s.Path("etcd-members", "backup-gone-shard-etcd", "gone-shard-etcd-0", "volumes", "data", "data"))
	assert.True(t, os.IsNotExist(statErr), "nothing restored, and etcd never started: %v", statErr)
}

// TestBackupAgentAndRestoreThroughS3 runs the builders' agent with an S3 store (versitygw):
// its credentials Secret and CA bundle ConfigMap written as the pod mounts them, a snapshot
// taken into the bucket under the setup's prefix; then a member whose restore init container
// reads it through the agent, from the bucket, starts from it.
func TestBackupAgentAndRestoreThroughS3(t *testing.T) {
	s := processStack(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	store, err := StartS3(ctx, S3Options{Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(store.Stop)
	s3 := &operatorv1alpha1.S3SnapshotStore{Endpoint: store.Endpoint, Bucket: store.Bucket, Region: store.Region,
		CredentialsSecretRef: corev1.LocalObjectReference{Name: "s3-credentials"}, CABundle: store.CAPEM}

	cas := newEtcdCAs(t)
	root := backupCluster("s3", "rootshard", "root", "root", 1)
	root.Spec.Backup.Store = operatorv1alpha1.EtcdSnapshotStore{S3: s3}
	secrets := cas.secrets(t, root)
	secrets["s3-credentials"] = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3-credentials", Namespace: root.Namespace},
		Data: map[string][]byte{"accessKeyID": []byte(store.AccessKeyID), "secretAccessKey": []byte(store.SecretAccessKey)}}
	bundle := typed[corev1.ConfigMap](t, root.S3CABundle())
	configMaps := map[string]*corev1.ConfigMap{bundle.Name: bundle}
	kcp := tlsOf(t, secrets[root.ClientSecret()], cas.Client.CertPEM)

	members, err := s.RunEtcdMembers(ctx, typed[appsv1.StatefulSet](t, root.StatefulSet("hash")), secrets)
	require.NoError(t, err)
	t.Cleanup(members.Stop)
	_, err = etcdClient(t, members, kcp).Put(ctx, "/registry/through-s3", "kept")
	require.NoError(t, err)
	backupAgent, err := s.RunEtcdBackupAgent(ctx, typed[appsv1.Deployment](t, root.AgentDeployment("image", "hash")), secrets, configMaps, members)
	require.NoError(t, err)
	t.Cleanup(backupAgent.Stop)
	assert.NotContains(t, strings.Join(backupAgent.Args, " "), store.SecretAccessKey, "no credential on the command line")
	client := agent.Client{URL: backupAgent.URL, HTTP: &http.Client{Transport: &http.Transport{TLSClientConfig: kcp}}}
	snapshot, err := client.Take(ctx, "")
	require.NoError(t, err, "the agent's log:\n%s", backupAgent.Log())
	assert.FileExists(t, filepath.Join(store.DataDir, store.Bucket, "s3", "root", snapshot.Name), "under the setup's prefix")

	// A member of another etcd of the same CAs restores it through the agent, which reads it
	// from the bucket.
	east := backupCluster("s3", "shard", "east", "east-shard", 1)
	east.Spec.Backup = nil
	east.Restoring = root.OwnRestore(snapshot.Name)
	eastSecrets := cas.secrets(t, east)
	restored, err := s.RunEtcdMembersWith(ctx, typed[appsv1.StatefulSet](t, east.StatefulSet("hash")), eastSecrets,
		EtcdMembersWith{Agents: []*EtcdAgent{backupAgent}})
	require.NoError(t, err)
	t.Cleanup(restored.Stop)
	got, err := etcdClient(t, restored, tlsOf(t, eastSecrets[east.ClientSecret()], cas.Client.CertPEM)).Get(ctx, "/registry/through-s3")
	require.NoError(t, err)
	require.Len(t, got.Kvs, 1, "the member starts from the snapshot in the bucket")
	assert.Equal(t, "kept", string(got.Kvs[0].Value))
}
