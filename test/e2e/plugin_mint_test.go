package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
)

// TestKubectlPlugin runs `kubectl kcp-setups` as a user has it, found by kubectl on the PATH, on the
// example setup of artifacts/examples: the status tree names every object of it and their
// certificates; a kubeconfig minted on the front proxy and merged into the user's kubeconfig
// is accepted by a kcp stand-in, as the identity asked for, for the validity asked for; the
// file is left 0600 and entries of the same names, or an existing -o file, are replaced only
// with --overwrite; and errors read and exit as kubectl's.
func TestKubectlPlugin(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "plugin")
	kubectl(t, "apply", "-n", ns, "-f", "../../artifacts/examples/")
	for _, o := range []string{"rootshard/root", "shard/shard-1", "frontproxy/edge", "cacheserver/cache"} {
		waitFor(t, ns, o, "CertificatesReady")
	}

	// The tree names every object of the example setup, and the Certificates of each.
	var tree string
	want := []string{"RootShard/root", "├─CacheServer/cache", "Shard/shard-1", "FrontProxy/edge", "VirtualWorkspace/root-vw",
		"Kubeconfig/alice", "Certificate/root-ca", "Certificate/shard-1-server", "Certificate/root-edge-server", "Certificate/cache-server"}
	if !assert.Eventually(t, func() bool {
		out, stderr, err := stack.KubectlPlugin(t.Context(), stack.AdminKubeconfig, "status", "rootshard/root", "-n", ns)
		tree = out + stderr
		if err != nil {
			return false
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				return false
			}
		}
		return true
	}, 2*time.Minute, 2*time.Second) {
		t.Fatalf("the tree lacks one of %q:\n%s", want, tree)
	}
	t.Logf("kubectl kcp-setups status rootshard/root:\n%s", tree)
	assert.Regexp(t, `(?m)^`+ns+` +RootShard/root +\S+ +(True|False|Unknown)`, tree, "kubectl tree's columns")
	assert.Regexp(t, `(?m)^`+ns+` +[│ ]*[├└]─Kubeconfig/alice`, tree, "the Kubeconfig hangs under its target")
	out, _, err := stack.KubectlPlugin(t.Context(), stack.AdminKubeconfig, "status", "rootshard/root", "-n", ns, "--conditions")
	require.NoError(t, err)
	assert.Contains(t, out, "─CertificatesReady")

	// Minted on the front proxy and merged into a user's kubeconfig, next to what it had.
	// The user's file is 0644: the merge leaves it the user's alone.
	mine := filepath.Join(t.TempDir(), "config")
	admin, err := os.ReadFile(stack.AdminKubeconfig)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(mine, admin, 0o644))
	require.NoError(t, os.Chmod(mine, 0o644))
	_, stderr, err := stack.KubectlPlugin(t.Context(), mine, "kubeconfig", "frontproxy/edge", "-n", ns,
		"--workspace", "root:team-a", "--validity", "8h", "--merge", "--username", "alice", "--group", "team-a")
	require.NoError(t, err, stderr)
	context := "kcp-" + ns + "-edge"
	assert.Contains(t, stderr, "Merged contexts ["+context+" "+context+"-base] into "+mine)
	merged, err := clientcmd.LoadFromFile(mine)
	require.NoError(t, err)
	before, err := clientcmd.LoadFromFile(stack.AdminKubeconfig)
	require.NoError(t, err)
	assert.Equal(t, before.CurrentContext, merged.CurrentContext, "the current context stays")
	require.Contains(t, merged.Contexts, context)
	assert.Contains(t, merged.Clusters[context].Server, "/clusters/root:team-a")
	cert := parseCert(t, merged.AuthInfos[merged.Contexts[context].AuthInfo].ClientCertificateData)
	assert.WithinDuration(t, time.Now().Add(8*time.Hour), cert.NotAfter, 2*time.Minute, "valid for 8h")
	info, err := os.Stat(mine)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the file with the key is the user's alone")

	// The same names again: refused and nothing written, unless --overwrite.
	written, err := os.ReadFile(mine)
	require.NoError(t, err)
	_, stderr, err = stack.KubectlPlugin(t.Context(), mine, "kubeconfig", "frontproxy/edge", "-n", ns, "--merge",
		"--username", "alice", "--group", "team-a")
	require.Error(t, err)
	assert.Contains(t, stderr, "error: "+mine+` already has cluster "`+context+`"`)
	assert.Contains(t, stderr, "pass --overwrite to replace them")
	unchanged, err := os.ReadFile(mine)
	require.NoError(t, err)
	assert.Equal(t, string(written), string(unchanged), "a refused merge writes nothing")
	// -o onto an existing file is refused too, before anything is minted; --overwrite replaces it, 0600.
	out, stderr, err = stack.KubectlPlugin(t.Context(), mine, "kubeconfig", "frontproxy/edge", "-n", ns, "-o", mine)
	require.Error(t, err, out)
	assert.Equal(t, "error: "+mine+" already exists: pass --overwrite to replace it\n", stderr)
	file := filepath.Join(t.TempDir(), "edge.kubeconfig")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	require.NoError(t, os.Chmod(file, 0o644))
	_, stderr, err = stack.KubectlPlugin(t.Context(), mine, "kubeconfig", "frontproxy/edge", "-n", ns, "-o", file, "--overwrite",
		"--username", "alice", "--group", "team-a")
	require.NoError(t, err, stderr)
	info, err = os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "-o --overwrite leaves the file the user's alone")
	_, err = clientcmd.LoadFromFile(file)
	require.NoError(t, err)
	_, stderr, err = stack.KubectlPlugin(t.Context(), mine, "kubeconfig", "frontproxy/edge", "-n", ns, "--merge", "--overwrite",
		"--workspace", "root:team-a", "--validity", "8h", "--username", "alice", "--group", "team-a")
	require.NoError(t, err, stderr)
	// kubectl still reaches the host cluster with the file, and the stand-in with the context.
	_, stderr, err = stack.KubectlWith(t.Context(), mine, "get", "rootshard", "root", "-n", ns)
	require.NoError(t, err, stderr)
	standIn, err := stack.StartStandIn(t.Context(), rootShardPKI(t, ns, "root"))
	require.NoError(t, err)
	t.Cleanup(standIn.Stop)
	who, stderr, err := stack.KubectlWith(t.Context(), mine, "--context", context, "--server", standIn.URL, "--tls-server-name", "localhost",
		"auth", "whoami", "-o", `jsonpath={.status.userInfo.username} {.status.userInfo.groups}`)
	require.NoError(t, err, stderr)
	assert.Equal(t, `alice ["team-a","system:authenticated"]`, who)

	// Errors as kubectl's: the server's, and the command line's.
	_, stderr, err = stack.KubectlPlugin(t.Context(), stack.AdminKubeconfig, "kubeconfig", "frontproxy/nowhere", "-n", ns)
	require.Error(t, err)
	assert.Equal(t, "Error from server (NotFound): frontproxies.operator.kcp.io \"nowhere\" not found\n", stderr)
	_, stderr, err = stack.KubectlPlugin(t.Context(), stack.AdminKubeconfig, "status", "frontproxy/edge", "-n", ns)
	require.Error(t, err)
	assert.Contains(t, stderr, "See 'kubectl kcp-setups status -h' for help and examples")

	// Completion, as kubectl asks a plugin for it (kubectl_complete-kcp runs this).
	out, _, err = stack.KubectlPlugin(t.Context(), stack.AdminKubeconfig, "__complete", "status", "-n", ns, "rootshard/")
	require.NoError(t, err)
	assert.Contains(t, out, "rootshard/root\n")
}

// TestPluginBesideKcps: kcp ships kubectl plugins of its own (kubectl-kcp with workspace,
// bind, crd and claims; kubectl-ws; kubectl-create-workspace), which every kcp user has on
// the PATH. This plugin, kubectl-kcp_setups (`kubectl kcp-setups`), shadows none of them and
// none shadows it: kubectl resolves the longest plugin name its arguments spell first
// (`kcp-setups` finds kubectl-kcp_setups, `kcp ws` finds kubectl-kcp-ws before kubectl-kcp),
// so both answer their own commands with both on the PATH, and `kubectl plugin list` warns
// of nothing. kcp's plugins are stand-ins that print who they are.
func TestPluginBesideKcps(t *testing.T) {
	parallel(t, alone)
	dir := t.TempDir()
	require.NoError(t, os.Symlink(stack.Bin("kubectl-kcp_setups"), filepath.Join(dir, "kubectl-kcp_setups")))
	for _, name := range []string{"kubectl-kcp", "kubectl-ws", "kubectl-create-workspace"} {
		standIn := "#!/bin/sh\necho \"kcp's " + name + ": $*\"\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(standIn), 0o755))
	}
	run := func(args ...string) string {
		cmd := exec.CommandContext(t.Context(), stack.Bin("kubectl"), args...)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+"/usr/bin:/bin")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "kubectl %s: %s", strings.Join(args, " "), out)
		return string(out)
	}

	ours := run("kcp-setups", "--help")
	assert.Contains(t, ours, "kubectl kcp-setups works with the setups of kcp-setups")
	assert.Contains(t, ours, "kubectl kcp-setups [command]")
	assert.NotContains(t, ours, "kcp's")
	for _, tc := range []struct{ args []string }{
		{[]string{"kcp", "--help"}},
		{[]string{"kcp", "workspace", "use", "root"}},
		{[]string{"kcp", "setups"}},
	} {
		assert.Equal(t, "kcp's kubectl-kcp: "+strings.Join(tc.args[1:], " ")+"\n", run(tc.args...), "kcp's own plugin answers kubectl %v", tc.args)
	}
	assert.Equal(t, "kcp's kubectl-ws: root:team-a\n", run("ws", "root:team-a"))
	// kubectl runs kubectl-create-workspace for `kubectl create workspace`, as kcp documents it.
	assert.Equal(t, "kcp's kubectl-create-workspace: team-a\n", run("create", "workspace", "team-a"))

	// kubectl plugin list exits 1 on any warning, and warns of kcp's kubectl-create-workspace
	// that it extends `kubectl create`, which is how kcp means it; of the others, nothing.
	cmd := exec.CommandContext(t.Context(), stack.Bin("kubectl"), "plugin", "list")
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+"/usr/bin:/bin")
	out, _ := cmd.CombinedOutput()
	list := string(out)
	for _, name := range []string{"kubectl-kcp_setups", "kubectl-kcp", "kubectl-ws", "kubectl-create-workspace"} {
		assert.Contains(t, list, filepath.Join(dir, name))
	}
	assert.Contains(t, list, "one plugin warning was found")
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, "- warning:") {
			assert.Contains(t, line, "kubectl-create-workspace overwrites existing command: \"kubectl create\"",
				"no plugin overshadows another, or a kubectl command")
		}
	}
}
