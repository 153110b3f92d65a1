package e2e

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

// TestPreviewMatchesWhatHappens: on a running setup (a RootShard, a Shard pinned at v0.31.6
// and a FrontProxy), the warnings of `kubectl apply --server-side --dry-run=server` list
// exactly the Deployments that then roll when the change is applied for real, compared with
// the ReplicaSets that appear, for a release change (the Shard's spec.image.tag to v0.32.3),
// a template change (the FrontProxy's resources) and a no-op, which says that nothing
// changes in the host cluster and rolls nothing. The real write answers with the summary. A
// dry run of spec.version on the RootShard previews the whole setup at that release.
func TestPreviewMatchesWhatHappens(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "preview")
	givenRootShard(t, ns)
	givenShard(t, ns, withSpec("  image: {tag: v0.31.6}\n"))
	givenFrontProxy(t, ns)

	for _, step := range []struct {
		name     string
		manifest string
		rolls    []string
	}{{
		name:     "a release change",
		manifest: shardManifest + "  image: {tag: v0.32.3}\n",
		rolls:    []string{"shard-1-shard-kcp"},
	}, {
		name:     "a template change",
		manifest: frontProxyManifest("edge") + "  resources: {requests: {cpu: 50m}}\n",
		rolls:    []string{"edge-front-proxy"},
	}, {
		name:     "a no-op",
		manifest: frontProxyManifest("edge") + "  resources: {requests: {cpu: 50m}}\n",
	}} {
		t.Run(step.name, func(t *testing.T) {
			// Rolls not caused by the change (certificates issued after the setup became
			// Available change the hash of the Secrets its pods mount) are over first.
			before := settled(t, ns)
			file := writeManifest(t, step.manifest)
			dry := kubectl(t, "apply", "--server-side", "--force-conflicts", "--dry-run=server", "-n", ns, "-f", file)
			predicted := rolling(dry)
			if len(step.rolls) == 0 {
				assert.Contains(t, dry, "Warning: preview: no change in the host cluster", "a no-op says so")
				// The plugin's plan sends the same dry run, and prints the preview under the object.
				out, stderr, err := stack.KubectlPlugin(t.Context(), stack.AdminKubeconfig, "plan", "-n", ns, "-f", file)
				require.NoError(t, err, stderr)
				assert.Equal(t, "FrontProxy "+ns+"/edge:\n  no change in the host cluster\n", out)
			}
			assert.Equal(t, step.rolls, predicted, "the dry run's preview:\n%s", dry)
			assert.Equal(t, before, replicaSets(t, ns), "a dry run changes nothing in the host cluster")

			real := kubectl(t, "apply", "--server-side", "--force-conflicts", "-n", ns, "-f", file)
			assert.Equal(t, predicted, rolling(real), "the real write's summary names the same Deployments:\n%s", real)
			after := settled(t, ns)
			var rolled []string
			for name, owner := range after {
				if _, ok := before[name]; !ok && !slices.Contains(rolled, owner) {
					rolled = append(rolled, owner)
				}
			}
			slices.Sort(rolled)
			assert.Equal(t, predicted, rolled, "the Deployments that rolled (their new ReplicaSets) are the preview's")
		})
	}

	// A release of the whole setup (a dry run alone: the roll is another test's): the
	// preview says the roll's order and plans every member that pins no tag at the release,
	// the RootShard's internal proxy and its FrontProxy with it; the Shard pins its own.
	dry := kubectl(t, "apply", "--server-side", "--force-conflicts", "--dry-run=server", "-n", ns, "-f",
		writeManifest(t, framework.RootShardManifest("root", "kcp.example.com", 6443)+"  version: v0.32.2\n"))
	assert.Contains(t, dry, "Warning: preview: RootShard/root: spec.version (unset)→v0.32.2 rolls the setup group by group, "+
		"each once the one before is rolled out and Available: CacheServer → RootShard → Shard → VirtualWorkspace → FrontProxy")
	assert.Contains(t, dry, "Warning: preview: RootShard/root: Deployment root-kcp rolls (image v0.32.3→v0.32.2")
	assert.Equal(t, []string{"edge-front-proxy", "root-kcp", "root-proxy"}, rolling(dry), "the dry run's preview:\n%s", dry)
}

// rollsLine is a preview line of a Deployment that rolls, in the full list and in the summary.
var rollsLine = regexp.MustCompile(`Deployment (\S+) rolls`)

// rolling are the Deployments the preview lines of kubectl's output say roll, sorted.
func rolling(out string) []string {
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "Warning: preview: ") {
			continue
		}
		for _, m := range rollsLine.FindAllStringSubmatch(line, -1) {
			if !slices.Contains(names, m[1]) {
				names = append(names, m[1])
			}
		}
	}
	slices.Sort(names)
	return names
}

// replicaSets are the ReplicaSets of ns, by name, each with the Deployment that owns it.
func replicaSets(t *testing.T, ns string) map[string]string {
	out := kubectl(t, "get", "replicasets", "-n", ns, "-o", `jsonpath={range .items[*]}{.metadata.name} {.metadata.ownerReferences[0].name}{"\n"}{end}`)
	rs := map[string]string{}
	for _, line := range nonEmptyLines(out) {
		name, owner, _ := strings.Cut(line, " ")
		rs[name] = owner
	}
	return rs
}

// settled waits until every Deployment of ns is rolled out and its ReplicaSets have not
// changed for 15 s, and returns them.
func settled(t *testing.T, ns string) map[string]string {
	t.Helper()
	var last map[string]string
	stableSince := time.Now()
	require.Eventually(t, func() bool {
		now := replicaSets(t, ns)
		if !maps.Equal(now, last) {
			last, stableSince = now, time.Now()
			return false
		}
		rolledOut := kubectl(t, "get", "deployments", "-n", ns, "-o",
			`jsonpath={range .items[*]}{.metadata.generation}={.status.observedGeneration} {.spec.replicas}={.status.updatedReplicas}={.status.availableReplicas}{"\n"}{end}`)
		for _, line := range nonEmptyLines(rolledOut) {
			gens, replicas, _ := strings.Cut(line, " ")
			g := strings.Split(gens, "=")
			r := strings.Split(replicas, "=")
			if g[0] != g[1] || r[0] != r[1] || r[1] != r[2] {
				stableSince = time.Now()
				return false
			}
		}
		return time.Since(stableSince) >= 15*time.Second
	}, 4*time.Minute, 2*time.Second, "the setup of %s settles", ns)
	return last
}

// withoutPreview is kubectl's output without the server's preview lines: what a test of
// other warnings looks at.
func withoutPreview(out string) string {
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "Warning: preview: ") {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}
