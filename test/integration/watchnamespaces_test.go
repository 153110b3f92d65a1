package integration

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/cmd/apiserver/app"
)

// TestWatchNamespacesRefuseOtherNamespaces: with --watch-namespaces, an object of any kind
// is created only in a served namespace; elsewhere the create, and the create of a
// server-side apply, is a 403 naming the namespace and the flag, and nothing is stored.
func TestWatchNamespacesRefuseOtherNamespaces(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()), func(o *app.Options) { o.WatchNamespaces = "team-b," + namespace })
	t.Cleanup(s.stop)
	ops := s.client.OperatorV1alpha1()

	_, err := ops.RootShards(namespace).Create(t.Context(), newRootShard("served"), metav1.CreateOptions{})
	require.NoError(t, err)

	elsewhere := newRootShard("elsewhere")
	elsewhere.Namespace = "team-c"
	_, err = ops.RootShards("team-c").Create(t.Context(), elsewhere, metav1.CreateOptions{})
	require.True(t, apierrors.IsForbidden(err), "%v", err)
	assert.ErrorContains(t, err, `rootshards.operator.kcp.io "elsewhere" is forbidden: namespace "team-c" is not served by this server, which serves only team-a, team-b (--watch-namespaces)`)
	shard := newShard("elsewhere", "served")
	shard.Namespace = "team-c"
	_, err = ops.Shards("team-c").Create(t.Context(), shard, metav1.CreateOptions{})
	require.True(t, apierrors.IsForbidden(err), "%v", err)
	_, err = ops.RootShards("team-c").Get(t.Context(), "elsewhere", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "nothing is stored: %v", err)

	// An apply that would create is a create.
	body := []byte(`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"RootShard","metadata":{"name":"applied","namespace":"team-c"},` +
		`"spec":{"etcd":{"endpoints":["https://etcd:2379"]},"external":{"hostname":"kcp.example.com"}}}`)
	err = ops.RESTClient().Patch("application/apply-patch+yaml").Namespace("team-c").Resource("rootshards").Name("applied").
		Param("fieldManager", "test").Body(body).Do(t.Context()).Error()
	require.True(t, apierrors.IsForbidden(err), "%v", err)
}
