package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

// TestAPIResourcesAndCategory runs first (its file sorts first), serial, on the empty shared
// stack: no other test has applied its objects yet.
func TestAPIResourcesAndCategory(t *testing.T) {
	out := kubectl(t, "api-resources", "--api-group=operator.kcp.io", "-o", "wide")
	for _, r := range []string{"rootshards", "shards", "frontproxies", "cacheservers", "kubeconfigs", "virtualworkspaces", "links"} {
		line := lineWith(t, out, r+" ")
		assert.Contains(t, line, "operator.kcp.io/v1alpha1", r)
		assert.Contains(t, line, "true", "%s is namespaced", r)
		assert.Regexp(t, `\bkcp\b`, line, "%s is in the kcp category", r)
	}
	assert.Len(t, nonEmptyLines(out), 8, "a header and seven resources:\n%s", out)

	out, err := stack.Kubectl(t.Context(), "get", "kcp", "-A")
	require.NoError(t, err, out)
	assert.Contains(t, out, "No resources found")
}

func TestApplyExamplesAndGet(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "examples")
	examples, err := filepath.Abs("../../artifacts/examples")
	require.NoError(t, err)
	out := kubectl(t, "apply", "-n", ns, "-f", examples)
	for _, kind := range []string{"rootshard", "shard", "frontproxy", "cacheserver", "kubeconfig", "virtualworkspace", "link"} {
		assert.Regexp(t, kind+`\.operator\.kcp\.io/\S+ created`, out)
	}

	out = kubectl(t, "get", "rootshards", "-n", ns)
	assert.Regexp(t, `^NAME\s+HOSTNAME\s+VERSION\s+PHASE\s+AGE\n`, out)
	assert.Regexp(t, `\nroot\s+kcp\.example\.com\s+`, out)

	out = kubectl(t, "get", "rootshards", "-n", ns, "-o", "wide")
	assert.Regexp(t, `^NAME\s+HOSTNAME\s+VERSION\s+PHASE\s+AGE\s+REPLICAS\s+READY\n`, out)

	out = kubectl(t, "get", "shards,frontproxies,kubeconfigs", "-n", ns)
	assert.Regexp(t, `NAME\s+ROOTSHARD\s+PHASE\s+AGE\nshard\.operator\.kcp\.io/shard-1\s+root\s`, out)
	assert.Regexp(t, `NAME\s+ROOTSHARD\s+HOSTNAME\s+PHASE\s+AGE\nfrontproxy\.operator\.kcp\.io/edge\s+root\s+kcp\.example\.com`, out)
	assert.Regexp(t, `NAME\s+TARGET\s+SECRET\s+PHASE\s+AGE\nkubeconfig\.operator\.kcp\.io/alice\s+FrontProxy/edge\s+alice-kubeconfig`, out)

	out = kubectl(t, "get", "virtualworkspaces", "-n", ns)
	assert.Regexp(t, `^NAME\s+TARGET\s+URL\s+PHASE\s+AGE\nroot-vw\s+RootShard/root\s+https://vw\.kcp\.example\.com:6443\s`, out)

	out = kubectl(t, "get", "links", "-n", ns)
	assert.Regexp(t, `^NAME\s+ROOTSHARD\s+IDENTITY\s+CONSUMERS\s+READY\s+AGE\neu-1\s+root\s+eu-1\.links\.example\.com\s+Shard,FrontProxy,Kubeconfig\s+False\s`, out)

	out = kubectl(t, "get", "kcp", "-n", ns, "-o", "name")
	assert.ElementsMatch(t, []string{
		"rootshard.operator.kcp.io/root", "shard.operator.kcp.io/shard-1", "frontproxy.operator.kcp.io/edge",
		"cacheserver.operator.kcp.io/cache", "kubeconfig.operator.kcp.io/alice", "virtualworkspace.operator.kcp.io/root-vw",
		"link.operator.kcp.io/eu-1",
	}, nonEmptyLines(out))

	out = kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", "yaml")
	assert.Contains(t, out, "clusterDomain: cluster.local", "defaults are stored")
	assert.Regexp(t, `external:\n\s+hostname: kcp\.example\.com\n\s+port: 6443`, out)
	assert.Contains(t, out, "generation: 1")
}

func TestExplain(t *testing.T) {
	parallel(t, alone)
	out := kubectl(t, "explain", "rootshard.spec.external.hostname")
	assert.Contains(t, out, "GROUP:      operator.kcp.io")
	assert.Contains(t, out, "Hostname is the external name of the kcp instance")

	out = kubectl(t, "explain", "rootshard.spec.external")
	for _, f := range []string{"hostname", "port", "privateHostname", "privatePort"} {
		assert.Regexp(t, `\n\s+`+f+`\s`, out)
	}
}

func TestServerSideApply(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "ssa")
	file := writeManifest(t, framework.RootShardManifest("applied", "kcp.example.com", 6443))

	kubectl(t, "apply", "--server-side", "-n", ns, "-f", file)
	// The controller writes the status meanwhile, so the resourceVersion may move: what the
	// apply owns, and when it last changed it, must not.
	applied := func() string {
		return kubectl(t, "get", "rootshard", "applied", "-n", ns, "-o",
			`jsonpath={.metadata.generation} {.metadata.managedFields[?(@.manager=="kubectl")].operation} {.metadata.managedFields[?(@.manager=="kubectl")].time} {.metadata.managedFields[?(@.manager=="kubectl")].fieldsV1}`)
	}
	before := applied()
	require.Contains(t, before, "1 Apply ", "kubectl's apply is recorded")
	// managedFields' times have a resolution of a second: a write by the second apply would
	// show as a later time.
	time.Sleep(time.Second)
	out := kubectl(t, "apply", "--server-side", "-n", ns, "-f", file)
	assert.Contains(t, out, "serverside-applied")
	assert.Equal(t, before, applied(), "a second identical apply must not write")

	other := writeManifest(t, framework.RootShardManifest("applied", "other.example.com", 6443))
	out, err := stack.Kubectl(t.Context(), "apply", "--server-side", "--field-manager=intruder", "-n", ns, "-f", other)
	require.Error(t, err)
	assert.Contains(t, out, "conflict")
	assert.Contains(t, out, ".spec.external.hostname")
}

func TestInvalidManifestIsRejected(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "invalid")
	file := writeManifest(t, framework.RootShardManifest("broken", "kcp.example.com", 70000))
	out, err := stack.Kubectl(t.Context(), "apply", "-n", ns, "-f", file)
	require.Error(t, err)
	assert.Contains(t, out, `The RootShard "broken" is invalid`)
	assert.Contains(t, out, "spec.external.port: Invalid value: 70000: must be between 1 and 65535, inclusive")

	out, err = stack.Kubectl(t.Context(), "get", "rootshard", "broken", "-n", ns)
	require.Error(t, err)
	assert.Contains(t, out, "NotFound")
}

func writeManifest(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func lineWith(t *testing.T, out, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no line starting with %q in:\n%s", prefix, out)
	return ""
}

func nonEmptyLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
