package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/internal/localstack"
	"github.com/kcp-setups/apiserver/pkg/embeddedetcd/etcdtest"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup"
)

// TestEtcdAgentRestoreFromAVolumeStore runs `etcd-agent restore` as a member's init
// container would with the volume store mounted: the snapshot becomes the member's data
// directory; a second run leaves it alone.
func TestEtcdAgentRestoreFromAVolumeStore(t *testing.T) {
	srv, _, c := etcdtest.Member(t)
	_, err := c.Put(t.Context(), "/registry/a", "b")
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "snapshots")
	store, err := etcdbackup.NewDirStore(dir)
	require.NoError(t, err)
	snap, err := etcdbackup.Save(t.Context(), c.Maintenance, srv.ClientURL, store, "root")
	require.NoError(t, err)

	dataDir := filepath.Join(t.TempDir(), "data")
	args := []string{"etcd-agent", "restore", "--snapshot-dir=" + dir, "--snapshot=" + snap.Name, "--data-dir=" + dataDir,
		"--name=root-etcd-0", "--initial-advertise-peer-urls=https://root-etcd-0.root-etcd-peers:2380",
		"--initial-cluster=root-etcd-0=https://root-etcd-0.root-etcd-peers:2380", "--initial-cluster-token=kcp.root-etcd"}
	for range 2 {
		cmd := NewCommand()
		cmd.SetArgs(args)
		require.NoError(t, cmd.ExecuteContext(t.Context()))
		entries, err := os.ReadDir(filepath.Join(dataDir, "member"))
		require.NoError(t, err, "the member's data directory is etcd's")
		assert.NotEmpty(t, entries)
	}
}

// TestEtcdAgentRefusesWhatItCannotDo: the commands say what is missing instead of starting.
func TestEtcdAgentRefusesWhatItCannotDo(t *testing.T) {
	dir := t.TempDir()
	ca, err := localstack.LoadOrCreateCA(dir, "etcd-client-ca")
	require.NoError(t, err)
	kp, err := ca.Issue(dir, "agent", localstack.CertSpec{CommonName: "agent", DNSNames: []string{"localhost"}})
	require.NoError(t, err)
	certs := []string{"--cert-file=" + kp.CertFile, "--key-file=" + kp.KeyFile, "--trusted-ca-file=" + ca.CertFile}
	for name, args := range map[string][]string{
		"serve without a store":                          append([]string{"etcd-agent", "serve", "--endpoints=https://localhost:2379", "--base=root"}, certs...),
		"serve without endpoints":                        append([]string{"etcd-agent", "serve", "--snapshot-dir=" + t.TempDir(), "--base=root"}, certs...),
		"serve with certificate files that do not exist": {"etcd-agent", "serve", "--snapshot-dir=" + t.TempDir(), "--cert-file=a", "--key-file=b", "--trusted-ca-file=c"},
		"serve without certificates":                     {"etcd-agent", "serve", "--snapshot-dir=" + t.TempDir()},
		"restore without a snapshot":                     {"etcd-agent", "restore", "--snapshot-dir=" + t.TempDir(), "--data-dir=/x", "--name=n"},
		"restore from two places":                        {"etcd-agent", "restore", "--source=https://x:2390", "--snapshot-dir=/y", "--snapshot=s", "--data-dir=/x", "--name=n", "--initial-advertise-peer-urls=https://p", "--initial-cluster=n=https://p"},
		"S3 without credentials":                         {"etcd-agent", "restore", "--s3-endpoint=https://s3.example.com", "--s3-bucket=b", "--s3-credentials-dir=" + t.TempDir(), "--snapshot=s", "--data-dir=/x", "--name=n", "--initial-advertise-peer-urls=https://p", "--initial-cluster=n=https://p"},
		"a directory and S3 at once":                     {"etcd-agent", "restore", "--s3-endpoint=https://s3.example.com", "--snapshot-dir=/y", "--snapshot=s", "--data-dir=/x", "--name=n", "--initial-advertise-peer-urls=https://p", "--initial-cluster=n=https://p"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := NewCommand()
			cmd.SetArgs(args)
			cmd.SetOut(os.Stderr)
			assert.Error(t, cmd.ExecuteContext(t.Context()))
		})
	}
}
