package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

func TestRBACIsEnforced(t *testing.T) {
	parallel(t, alone)
	allowed := namespace(t, "rbac-allowed")
	other := namespace(t, "rbac-other")
	alice, err := stack.UserKubeconfig("alice", "team-a")
	require.NoError(t, err)

	_, stderr, err := stack.KubectlWith(t.Context(), alice, "get", "rootshards", "-n", allowed)
	require.Error(t, err)
	assert.Contains(t, stderr, `User "alice" cannot list resource "rootshards" in API group "operator.kcp.io"`)

	kubectl(t, "create", "role", "rootshard-reader", "-n", allowed, "--verb=get,list,watch", "--resource=rootshards.operator.kcp.io")
	kubectl(t, "create", "rolebinding", "alice-reads", "-n", allowed, "--role=rootshard-reader", "--user=alice")

	require.Eventually(t, func() bool {
		_, _, err := stack.KubectlWith(t.Context(), alice, "get", "rootshards", "-n", allowed)
		return err == nil
	}, time.Minute, time.Second, "alice can list rootshards once bound")

	_, stderr, err = stack.KubectlWith(t.Context(), alice, "get", "rootshards", "-n", other)
	require.Error(t, err)
	assert.Contains(t, stderr, "forbidden", "the binding is for one namespace only")
	_, stderr, err = stack.KubectlWith(t.Context(), alice, "create", "-n", allowed, "-f", writeManifest(t, framework.RootShardManifest("nope", "kcp.example.com", 6443)))
	require.Error(t, err)
	assert.Contains(t, stderr, `cannot create resource "rootshards"`, "the role grants reading only")

	// Impersonation goes through the same delegated authorizer.
	out, err := stack.Kubectl(t.Context(), "auth", "can-i", "list", "rootshards.operator.kcp.io", "-n", other, "--as=alice")
	require.Error(t, err)
	assert.Contains(t, out, "no")
}
