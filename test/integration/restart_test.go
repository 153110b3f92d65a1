package integration

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestObjectsSurviveARestart stops the server and starts it again on the same embedded etcd
// directory: every object is still there, unchanged.
func TestObjectsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
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

	s = startServer(t, dir)
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
