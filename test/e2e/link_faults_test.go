package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLinkSurvivesAHomeRestart: a Shard in a second cluster, linked to a RootShard of the
// fault tests' stack, keeps serving with what it has while the home server is down (its
// LinkReady goes False, reason Disconnected, no Deployment changes), and once the home
// server runs again its link reconnects by itself, and a change at home reaches it over the
// resumed stream: the trust bundle of a rotation's Start.
func TestLinkSurvivesAHomeRestart(t *testing.T) {
	s := onFaultStack(t)
	const remote = "xlinkfault-remote"
	ns, second := linkedShardAcrossClusters(t, "xlinkfault-home", remote)
	waitForOn(t, second, remote, "shard/shard-1", "LinkReady")
	waitForOn(t, second, remote, "shard/shard-1", "Available")

	linkReady := func() string {
		out, _ := second.Kubectl(t.Context(), "get", "shard", "shard-1", "-n", remote, "-o",
			`jsonpath={.status.conditions[?(@.type=="LinkReady")].status}/{.status.conditions[?(@.type=="LinkReady")].reason}`)
		return out
	}
	generations := func() string {
		return kubectlOn(t, second, "get", "deployments", "-n", remote, "-o", `jsonpath={range .items[*]}{.metadata.name}={.metadata.generation} {end}`)
	}
	deployments := generations()
	require.NotEmpty(t, deployments)

	// The home server dies: the remote's link goes down, and it keeps serving with what it
	// has, nothing rolled.
	s.KillServer()
	down := true
	t.Cleanup(func() {
		if down {
			assert.NoError(t, s.StartServer(context.Background()), "the fault stack's server is started again for the next fault test")
		}
	})
	require.Eventually(t, func() bool { return linkReady() == "False/Disconnected" }, 3*time.Minute, 2*time.Second,
		"the remote's LinkReady goes False, Disconnected, while the home server is down: %s", linkReady())
	assert.Equal(t, "True", kubectlOn(t, second, "get", "shard", "shard-1", "-n", remote, "-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`),
		"the Shard still serves")
	assert.Equal(t, deployments, generations(), "no Deployment of the second cluster changed while the home was down")

	// The home server runs again: the link reconnects by itself, nothing done on the remote.
	require.NoError(t, s.StartServer(t.Context()))
	down = false
	require.Eventually(t, func() bool { return linkReady() == "True/Connected" }, 3*time.Minute, 2*time.Second,
		"the remote's link reconnects once the home server runs again: %s", linkReady())
	assert.Equal(t, deployments, generations(), "no Deployment of the second cluster changed when the link came back")

	// A change at home after the restart reaches the remote over the resumed stream: the
	// Start of the requestheader-client CA's rotation puts both CAs in the linked Shard's
	// trust bundle.
	oldCA := secretCert(t, ns, "root-requestheader-client-ca")
	_, stderr, err := rotate(t, ns, "rootshards", "root", "Start", "requestheader-client")
	require.NoError(t, err, stderr)
	require.Eventually(t, func() bool { return len(readSecret(t, s, ns, "root-requestheader-client-ca-next", "tls.crt")) > 0 },
		2*time.Minute, time.Second, "cert-manager issues the new requestheader-client CA")
	newCA := secretCert(t, ns, "root-requestheader-client-ca-next")
	require.Eventually(t, func() bool {
		return holdsAll(certsIn(readSecret(t, second, remote, "shard-1-shard-root-requestheader-client-ca-trust", "tls.crt")), oldCA, newCA)
	}, 2*time.Minute, time.Second, "the linked Shard's requestheader-client trust bundle holds both CAs, over the resumed stream")
}
