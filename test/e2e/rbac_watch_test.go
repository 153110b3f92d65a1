package e2e

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRBACIsEnforced(t *testing.T) {
	t.Parallel()
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
	_, stderr, err = stack.KubectlWith(t.Context(), alice, "create", "-n", allowed, "-f", writeManifest(t, rootShardManifest("nope", "kcp.example.com", 6443)))
	require.Error(t, err)
	assert.Contains(t, stderr, `cannot create resource "rootshards"`, "the role grants reading only")

	// Impersonation goes through the same delegated authorizer.
	out, err := stack.Kubectl(t.Context(), "auth", "can-i", "list", "rootshards.operator.kcp.io", "-n", other, "--as=alice")
	require.Error(t, err)
	assert.Contains(t, out, "no")
}

func TestWatchSeesCreateAndDelete(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "watch")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := stack.KubectlCommand(ctx, stack.AdminKubeconfig, "get", "rootshards", "-n", ns, "--watch", "--output-watch-events", "--no-headers")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { cancel(); _ = cmd.Wait() }()

	events := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			// A line is EVENT NAME HOSTNAME PHASE AGE; the event and the name tell the story.
			if f := strings.Fields(sc.Text()); len(f) >= 2 {
				events <- f[0] + " " + f[1]
			}
		}
		close(events)
	}()
	// The watch is established once kubectl has listed; an empty list prints nothing, so
	// create only after a moment and rely on the event stream's order.
	time.Sleep(2 * time.Second)
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, rootShardManifest("watched", "kcp.example.com", 6443)))
	kubectl(t, "delete", "rootshard", "watched", "-n", ns)

	// The controller adds its finalizer and writes the status in between, as MODIFIED events.
	var seen []string
	for len(seen) == 0 || seen[len(seen)-1] != "DELETED watched" {
		select {
		case e, ok := <-events:
			require.True(t, ok, "kubectl's watch ended early; saw %v", seen)
			seen = append(seen, e)
		case <-ctx.Done():
			t.Fatalf("saw only %v", seen)
		}
	}
	assert.Equal(t, "ADDED watched", seen[0], "events: %v", seen)
	for _, e := range seen[1 : len(seen)-1] {
		assert.Equal(t, "MODIFIED watched", e, "events: %v", seen)
	}

}

func TestServerRestart(t *testing.T) {
	ns := namespace(t, "restart")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, rootShardManifest("survivor", "kcp.example.com", 6443)))
	uid := kubectl(t, "get", "rootshard", "survivor", "-n", ns, "-o", "jsonpath={.metadata.uid}")

	stack.StopServer()
	require.NoError(t, stack.StartServer(t.Context()), "the server comes back and its APIService turns Available")

	assert.Equal(t, uid, kubectl(t, "get", "rootshard", "survivor", "-n", ns, "-o", "jsonpath={.metadata.uid}"))
	out := kubectl(t, "get", "apiservice", "v1alpha1.operator.kcp.io")
	assert.Regexp(t, `v1alpha1\.operator\.kcp\.io\s+kcp-setups/kcp-setups-loopback\s+True`, out)
}
