package e2e

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

// TestSetupsConvergeAfterACrash kills the server with SIGKILL while five setups are being
// reconciled, restarts it, and checks that every setup converges with nothing created twice
// and nothing applied twice.
func TestSetupsConvergeAfterACrash(t *testing.T) {
	s := onFaultStack(t)
	ns := namespace(t, "crash")
	var manifests []string
	for i := range 5 {
		manifests = append(manifests, framework.RootShardManifest(fmt.Sprintf("root-%d", i), "kcp.example.com", 6443),
			strings.ReplaceAll(strings.ReplaceAll(shardManifest, "shard-1", fmt.Sprintf("shard-%d", i)), "name: root}", fmt.Sprintf("name: root-%d}", i)))
	}
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, strings.Join(manifests, "---\n")))

	// Mid-reconcile: the setups were just created, and cert-manager is still issuing.
	s.KillServer()
	require.NoError(t, s.StartServer(t.Context()))

	for i := range 5 {
		waitFor(t, ns, fmt.Sprintf("rootshard/root-%d", i), "Available")
		waitFor(t, ns, fmt.Sprintf("shard/shard-%d", i), "Available")
	}

	// Every object is there once: a certificate per name, a Deployment per setup, and one
	// ReplicaSet per Deployment revision.
	certs := nonEmptyLines(kubectl(t, "get", "certificates", "-n", ns, "-o", "name"))
	assert.Len(t, certs, 1+5*(1+7+7+3+6), "bootstrap CA, and per setup the root CA, 7 intermediates (the etcd CAs included), 7 root shard leaves (the mount proxy's and the server's own identity included), 3 of the root shard's internal front proxy and 6 shard leaves")
	assert.Equal(t, certs, dedupe(certs))
	deployments := nonEmptyLines(kubectl(t, "get", "deployments", "-n", ns, "-o", "name"))
	assert.Len(t, deployments, 15, "per setup, the root shard's, its internal front proxy's and the shard's")
	generations := map[string]int64{}
	for _, d := range deployments {
		generation, err := strconv.ParseInt(kubectl(t, "get", d, "-n", ns, "-o", "jsonpath={.status.observedGeneration}"), 10, 64)
		require.NoError(t, err)
		generations[d] = generation
	}
	assertAppliedOnce(t, ns, generations)
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

// assertAppliedOnce checks that the controllers applied each Deployment of ns once, given
// each one's generation. The one reason a Deployment may be applied again here is
// cert-manager issuing a Certificate twice: right after an issuance its trigger controller
// can still miss the new Secret in its cache, and issue again ("Issuing certificate as
// Secret does not exist", twice in the Certificate's events; seen under load after a
// crash). A CA issued twice must roll the leaves it signed and the pods that mount them
// (ReissueStaleLeaves), so then a Deployment applied again is right, and the test says why;
// with no Certificate issued twice, it is a failure.
func assertAppliedOnce(t *testing.T, ns string, generations map[string]int64) {
	t.Helper()
	var again []string
	for name, generation := range generations {
		if generation != 1 {
			again = append(again, fmt.Sprintf("%s (generation %d)", name, generation))
		}
	}
	if len(again) == 0 {
		return
	}
	sort.Strings(again)
	out := kubectl(t, "get", "certificates", "-n", ns, "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.revision}{"\n"}{end}`)
	var reissued []string
	for _, line := range nonEmptyLines(out) {
		if f := strings.Fields(line); len(f) == 2 && f[1] != "1" {
			reissued = append(reissued, f[0])
			t.Logf("cert-manager issued %s %s times:\n%s", f[0], f[1], kubectl(t, "get", "events", "-n", ns, "--field-selector", "involvedObject.kind=Certificate,involvedObject.name="+f[0],
				"-o", `jsonpath={range .items[*]}{.firstTimestamp} to {.lastTimestamp} ({.count}x) {.reason}: {.message}{"\n"}{end}`))
		}
	}
	t.Logf("replicasets:\n%s", kubectl(t, "get", "replicasets", "-n", ns, "-o", `jsonpath={range .items[*]}{.metadata.creationTimestamp} {.metadata.name}{"\n"}{end}`))
	if len(reissued) == 0 {
		t.Errorf("applied more than once, though cert-manager issued every Certificate once: %s", strings.Join(again, ", "))
		return
	}
	t.Logf("applied more than once, as cert-manager issued %s more than once: %s", strings.Join(reissued, ", "), strings.Join(again, ", "))
}
