package integration

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kcp-setups/apiserver/pkg/embeddedetcd"
)

// TestObjectsSurviveARestart stops the server and starts it again on the same storage, the
// embedded etcd's directory or an external etcd: every object is still there, unchanged.
func TestObjectsSurviveARestart(t *testing.T) {
	t.Run("embedded etcd", func(t *testing.T) {
		dir := t.TempDir()
		survivesRestart(t, embedded(dir))

		// The server reached its etcd with the client certificate kept in the directory,
		// each file readable by its owner alone (pkg/embeddedetcd shows they are reused
		// across restarts and that a client without them is refused).
		pki := filepath.Join(dir, "pki")
		for _, name := range []string{"ca.crt", "server.crt", "server.key", "client.crt", "client.key"} {
			info, err := os.Stat(filepath.Join(pki, name))
			require.NoError(t, err)
			assert.Equal(t, fs.FileMode(0o600), info.Mode().Perm(), name)
		}
	})
	t.Run("external etcd", func(t *testing.T) {
		// A member started apart from the server stands in for an etcd cluster.
		etcd, err := embeddedetcd.Start(t.Context(), t.TempDir())
		require.NoError(t, err)
		defer etcd.Close()
		survivesRestart(t, external(etcd))

		// The objects are in that etcd, under the server's prefix, as protobuf of v1alpha1.
		resp, err := rawEtcd(t, etcd).Get(t.Context(), "/kcp-setups/operator.kcp.io/rootshards/"+namespace+"/root")
		require.NoError(t, err)
		require.Len(t, resp.Kvs, 1)
		require.True(t, bytes.HasPrefix(resp.Kvs[0].Value, protobufMagic), "stored as protobuf: %q", resp.Kvs[0].Value)
		var envelope runtime.Unknown
		require.NoError(t, envelope.Unmarshal(resp.Kvs[0].Value[len(protobufMagic):]))
		assert.Equal(t, "operator.kcp.io/v1alpha1", envelope.APIVersion)
		assert.Equal(t, "RootShard", envelope.Kind)
	})
}

func survivesRestart(t *testing.T, store storage) {
	s := startServer(t, store)
	ctx := t.Context()
	ops := s.client.OperatorV1alpha1()

	rs, err := ops.RootShards(namespace).Create(ctx, newRootShard("root"), metav1.CreateOptions{})
	require.NoError(t, err)
	sh, err := ops.Shards(namespace).Create(ctx, newShard("shard-1", "root"), metav1.CreateOptions{})
	require.NoError(t, err)
	fp, err := ops.FrontProxies(namespace).Create(ctx, newFrontProxy("edge", "root"), metav1.CreateOptions{})
	require.NoError(t, err)
	cs, err := ops.CacheServers(namespace).Create(ctx, newCacheServer("cache"), metav1.CreateOptions{})
	require.NoError(t, err)
	kc, err := ops.Kubeconfigs(namespace).Create(ctx, newKubeconfig("alice", "edge"), metav1.CreateOptions{})
	require.NoError(t, err)
	s.stop()

	s = startServer(t, store)
	defer s.stop()
	ops = s.client.OperatorV1alpha1()

	gotRS, err := ops.RootShards(namespace).Get(ctx, "root", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, rs, gotRS)
	gotSh, err := ops.Shards(namespace).Get(ctx, "shard-1", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, sh, gotSh)
	gotFP, err := ops.FrontProxies(namespace).Get(ctx, "edge", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, fp, gotFP)
	gotCS, err := ops.CacheServers(namespace).Get(ctx, "cache", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, cs, gotCS)
	gotKC, err := ops.Kubeconfigs(namespace).Get(ctx, "alice", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, kc, gotKC)
}
