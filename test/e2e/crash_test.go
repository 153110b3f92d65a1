package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetupsConvergeAfterACrash kills the server with SIGKILL while five setups are being
// reconciled, restarts it, and checks that every setup converges with nothing created twice.
func TestSetupsConvergeAfterACrash(t *testing.T) {
	ns := namespace(t, "crash")
	var manifests []string
	for i := range 5 {
		manifests = append(manifests, rootShardManifest(fmt.Sprintf("root-%d", i), "kcp.example.com", 6443),
			strings.ReplaceAll(strings.ReplaceAll(shardManifest, "shard-1", fmt.Sprintf("shard-%d", i)), "name: root}", fmt.Sprintf("name: root-%d}", i)))
	}
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, strings.Join(manifests, "---\n")))

	// Mid-reconcile: the setups were just created, and cert-manager is still issuing.
	stack.KillServer()
	require.NoError(t, stack.StartServer(t.Context()))

	for i := range 5 {
		waitFor(t, ns, fmt.Sprintf("rootshard/root-%d", i), "Available")
		waitFor(t, ns, fmt.Sprintf("shard/shard-%d", i), "Available")
	}

	// Every object is there once: a certificate per name, a Deployment per setup, and one
	// ReplicaSet per Deployment revision.
	certs := nonEmptyLines(kubectl(t, "get", "certificates", "-n", ns, "-o", "name"))
	assert.Len(t, certs, 1+5*(1+7+7+6), "bootstrap CA, and per setup the root CA, 7 intermediates (the etcd CAs included), 7 root shard leaves (the mount proxy's and the server's own identity included) and 6 shard leaves")
	assert.Equal(t, certs, dedupe(certs))
	deployments := nonEmptyLines(kubectl(t, "get", "deployments", "-n", ns, "-o", "name"))
	assert.Len(t, deployments, 10)
	for _, d := range deployments {
		assert.Equal(t, "1", kubectl(t, "get", d, "-n", ns, "-o", "jsonpath={.status.observedGeneration}"), "%s was applied once", d)
	}
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
