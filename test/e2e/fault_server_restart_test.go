package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServerRestart(t *testing.T) {
	s := onFaultStack(t)
	ns := namespace(t, "restart")
	givenRootShard(t, ns, named("survivor"), until())
	uid := kubectl(t, "get", "rootshard", "survivor", "-n", ns, "-o", "jsonpath={.metadata.uid}")

	s.StopServer()
	require.NoError(t, s.StartServer(t.Context()), "the server comes back and its APIService turns Available")

	assert.Equal(t, uid, kubectl(t, "get", "rootshard", "survivor", "-n", ns, "-o", "jsonpath={.metadata.uid}"))
	out := kubectl(t, "get", "apiservice", "v1alpha1.operator.kcp.io")
	assert.Regexp(t, `v1alpha1\.operator\.kcp\.io\s+kcp-setups/kcp-setups-loopback\s+True`, out)
}
