// The harness's pieces that the product's tests share; the harness's own tests are in
// test/framework and internal/localstack.
package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kcp-setups/apiserver/test/framework"
)

// AssertEtcdCluster is issue 14's proof that a managed etcd, run for real by
// framework.RunEtcdMembers, is a cluster: its members form one over peer TLS; a client with
// client's certificate (kcp's, <base>-etcd-client) writes and reads; one with foreign's
// certificate (another RootShard's etcd client CA) and one without a certificate are refused;
// killing the last member keeps it writable, and the member catches up when it comes back.
// The harness proves it on a fixture of its own (test/framework's
// TestEtcdHarnessRunsAClusterAndForwardsPods).
func AssertEtcdCluster(t *testing.T, members *framework.EtcdMembers, client, foreign *corev1.Secret) {
	t.Helper()
	require.NoError(t, framework.CheckEtcdClusterServes(t.Context(), members, client, foreign))
	require.NoError(t, framework.CheckEtcdSurvivesMemberLoss(t.Context(), members, client, len(members.Members())-1))
}

// shardObject is a kcp Shard named name, at baseURL (empty for none).
func shardObject(name, baseURL string) *unstructured.Unstructured {
	return framework.ShardObject(name, baseURL)
}
