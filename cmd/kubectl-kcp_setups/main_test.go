package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"kubeconfig"}, "error: exactly one TYPE/NAME is required, got 0 arguments\nSee 'kubectl kcp-setups kubeconfig -h' for help and examples\n"},
		{[]string{"kubeconfig", "deployment/x"}, `error: the server doesn't have a resource type "deployment" here: one of rootshard, shard, frontproxy`},
		{[]string{"kubeconfig", "frontproxy/edge", "--merge", "-o", "f"}, "error: --merge and --output are exclusive"},
		{[]string{"kubeconfig", "frontproxy/edge", "--validity", "5m"}, "error: --validity must be at least 10m, got 5m0s"},
		{[]string{"kubeconfig", "frontproxy/edge", "--overwrite"}, "error: --overwrite needs --merge or --output"},
		{[]string{"kubeconfig", "frontproxy/edge", "-o", "main_test.go"}, "error: main_test.go already exists: pass --overwrite to replace it"},
		{[]string{"status", "shard/x"}, `resource type "shard" here: one of rootshard`},
		{[]string{"--bogus"}, "error: unknown flag: --bogus\nSee 'kubectl kcp-setups -h' for help and examples\n"},
		{[]string{"rotate", "rootshard/root", "--ca", "server"}, "error: --phase must be start or complete, got \"\"\nSee 'kubectl kcp-setups rotate -h'"},
		{[]string{"rotate", "rootshard/root", "--phase", "start"}, "error: --ca names at least one CA"},
		{[]string{"rotate", "rootshard/root", "--phase", "start", "--ca", "client", "--exclude", "deployment/x"},
			`error: --exclude takes shard/NAME, frontproxy/NAME or virtualworkspace/NAME, got "deployment/x"`},
		{[]string{"rotate", "shard/s", "--phase", "start", "--ca", "server"}, `resource type "shard" here: one of rootshard, cacheserver`},
	} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, 1, run(tc.args, &stdout, &stderr), "%v", tc.args)
		assert.Contains(t, stderr.String(), tc.says, "%v", tc.args)
		assert.Empty(t, stdout.String())
	}
}

func TestParseObject(t *testing.T) {
	cmd := newRootCommand(nil, nil)
	for _, tc := range []struct {
		args []string
		want object
	}{
		{[]string{"frontproxy/edge"}, object{frontProxyKind, "edge"}},
		{[]string{"frontproxies", "edge"}, object{frontProxyKind, "edge"}},
		{[]string{"RootShards.operator.kcp.io/root"}, object{rootShardKind, "root"}},
		{[]string{"shard/s-1"}, object{shardKind, "s-1"}},
	} {
		got, err := parseObject(cmd, tc.args, rootShardKind, shardKind, frontProxyKind)
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.want, got)
	}
	_, err := parseObject(cmd, []string{"frontproxy/"}, frontProxyKind)
	assert.ErrorContains(t, err, "a resource name is required")
}

// minted is a kubeconfig as the server renders one: contexts default and base, user kcp.
func minted(t *testing.T) []byte {
	cfg := clientcmdapi.NewConfig()
	cfg.AuthInfos["kcp"] = &clientcmdapi.AuthInfo{ClientCertificateData: []byte("cert"), ClientKeyData: []byte("key")}
	for name, server := range map[string]string{"default": "https://kcp:6443/clusters/root:team-a", "base": "https://kcp:6443"} {
		cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: []byte("ca")}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: "kcp"}
	}
	cfg.CurrentContext = "default"
	data, err := clientcmd.Write(*cfg)
	require.NoError(t, err)
	return data
}

func TestMergeKubeconfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config")
	host := clientcmdapi.NewConfig()
	host.Clusters["host"] = &clientcmdapi.Cluster{Server: "https://host:6443"}
	host.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: "t"}
	host.Contexts["host"] = &clientcmdapi.Context{Cluster: "host", AuthInfo: "admin"}
	host.CurrentContext = "host"
	require.NoError(t, clientcmd.WriteToFile(*host, file))
	flags := &clientFlags{loading: &clientcmd.ClientConfigLoadingRules{ExplicitPath: file}}

	require.NoError(t, os.Chmod(file, 0o644))
	got, contexts, err := mergeKubeconfig(flags, minted(t), "kcp-team-a-edge", false)
	require.NoError(t, err)
	assert.Equal(t, file, got)
	assert.Equal(t, []string{"kcp-team-a-edge", "kcp-team-a-edge-base"}, contexts)
	merged, err := clientcmd.LoadFromFile(file)
	require.NoError(t, err)
	assert.Equal(t, "host", merged.CurrentContext, "the current context stays")
	assert.Equal(t, "https://host:6443", merged.Clusters["host"].Server, "the rest stays")
	assert.Equal(t, "https://kcp:6443/clusters/root:team-a", merged.Clusters["kcp-team-a-edge"].Server)
	assert.Equal(t, "https://kcp:6443", merged.Clusters["kcp-team-a-edge-base"].Server)
	assert.Equal(t, "kcp-team-a-edge", merged.Contexts["kcp-team-a-edge"].Cluster)
	assert.Equal(t, "kcp-team-a-edge", merged.Contexts["kcp-team-a-edge"].AuthInfo)
	assert.Equal(t, "kcp-team-a-edge-base", merged.Contexts["kcp-team-a-edge-base"].Cluster)
	assert.Equal(t, []byte("cert"), merged.AuthInfos["kcp-team-a-edge"].ClientCertificateData)
	info, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "an existing 0644 file is made the user's alone")

	// Entries of the same names are never replaced silently: the file stays as it was.
	before, err := os.ReadFile(file)
	require.NoError(t, err)
	again := clientcmdapi.NewConfig()
	again.AuthInfos["kcp"] = &clientcmdapi.AuthInfo{ClientCertificateData: []byte("cert-2"), ClientKeyData: []byte("key-2")}
	again.Clusters["default"] = &clientcmdapi.Cluster{Server: "https://other:6443"}
	again.Contexts["default"] = &clientcmdapi.Context{Cluster: "default", AuthInfo: "kcp"}
	again.CurrentContext = "default"
	data, err := clientcmd.Write(*again)
	require.NoError(t, err)
	_, _, err = mergeKubeconfig(flags, data, "kcp-team-a-edge", false)
	require.EqualError(t, err, file+` already has cluster "kcp-team-a-edge", context "kcp-team-a-edge", user "kcp-team-a-edge": `+
		"pass --overwrite to replace them, or --name to merge under another name")
	after, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "nothing is written")
	// One name taken is enough to refuse: here only the user.
	_, _, err = mergeKubeconfig(flags, data, "admin", false)
	require.EqualError(t, err, file+` already has user "admin": pass --overwrite to replace them, or --name to merge under another name`)
	// With --overwrite they are replaced, and the rest stays.
	_, _, err = mergeKubeconfig(flags, data, "kcp-team-a-edge", true)
	require.NoError(t, err)
	merged, err = clientcmd.LoadFromFile(file)
	require.NoError(t, err)
	assert.Equal(t, "https://other:6443", merged.Clusters["kcp-team-a-edge"].Server)
	assert.Equal(t, []byte("cert-2"), merged.AuthInfos["kcp-team-a-edge"].ClientCertificateData)
	assert.Equal(t, "https://kcp:6443", merged.Clusters["kcp-team-a-edge-base"].Server, "entries of other names stay")
	assert.Equal(t, "https://host:6443", merged.Clusters["host"].Server)

	// Into a file that does not exist yet: it is made, with the minted context current.
	fresh := filepath.Join(t.TempDir(), "new")
	_, _, err = mergeKubeconfig(&clientFlags{loading: &clientcmd.ClientConfigLoadingRules{ExplicitPath: fresh}}, minted(t), "x", false)
	require.NoError(t, err)
	cfg, err := clientcmd.LoadFromFile(fresh)
	require.NoError(t, err)
	assert.Equal(t, "x", cfg.CurrentContext)
	info, err = os.Stat(fresh)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "a kubeconfig with a key is the user's alone")
}

func TestWritePrivateFile(t *testing.T) {
	dir := t.TempDir()
	perm := func(file string) os.FileMode {
		info, err := os.Stat(file)
		require.NoError(t, err)
		return info.Mode().Perm()
	}

	fresh := filepath.Join(dir, "fresh")
	require.NoError(t, writePrivateFile(fresh, []byte("key"), false))
	assert.Equal(t, os.FileMode(0o600), perm(fresh))

	// An existing file is refused without --overwrite, and left as it was.
	open := filepath.Join(dir, "open")
	require.NoError(t, os.WriteFile(open, []byte("theirs"), 0o644))
	require.NoError(t, os.Chmod(open, 0o644))
	require.EqualError(t, writePrivateFile(open, []byte("key"), false), open+" already exists: pass --overwrite to replace it")
	got, err := os.ReadFile(open)
	require.NoError(t, err)
	assert.Equal(t, "theirs", string(got))
	assert.Equal(t, os.FileMode(0o644), perm(open))

	// With --overwrite it is replaced, and a 0644 file no longer lets others read the key.
	require.NoError(t, writePrivateFile(open, []byte("key"), true))
	got, err = os.ReadFile(open)
	require.NoError(t, err)
	assert.Equal(t, "key", string(got))
	assert.Equal(t, os.FileMode(0o600), perm(open))
}

func TestPrintTree(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	created := metav1.NewTime(now.Add(-2 * time.Hour))
	cond := func(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason}
	}
	root := &node{kind: "RootShard", name: "root", phase: "Running", created: created, ready: "Available",
		conditions: []metav1.Condition{cond("Available", "True", "Ready"), cond("Synced", "True", "Reconciled")},
		children: []*node{
			{kind: "Certificate", name: "root-ca", created: created, ready: "Ready", conditions: []metav1.Condition{cond("Ready", "True", "Ready")}},
			{kind: "Shard", name: "shard-1", phase: "Provisioning", created: created, ready: "Available",
				conditions: []metav1.Condition{cond("Available", "False", "DeploymentUnavailable")},
				children:   []*node{{kind: "Certificate", name: "shard-1-server", created: created, ready: "Ready"}}},
		}}
	var out bytes.Buffer
	require.NoError(t, printTree(&out, "kcp", root, false, now))
	assert.Equal(t, strings.Join([]string{
		"NAMESPACE  NAME                            PHASE         READY  REASON                 AGE",
		"kcp        RootShard/root                  Running       True                          120m",
		"kcp        ├─Certificate/root-ca           -             True                          120m",
		"kcp        └─Shard/shard-1                 Provisioning  False  DeploymentUnavailable  120m",
		"kcp          └─Certificate/shard-1-server  -             -                             120m",
	}, "\n")+"\n", out.String())
}

func TestPrintVersion(t *testing.T) {
	root := &node{kind: "RootShard", name: "root",
		conditions: []metav1.Condition{{Type: "Upgrading", Status: "True", Reason: "Rolling",
			Message: "group Shard (3 of 5) to v0.32.3: waiting for Shard/b: its Deployment runs v0.31.6"}},
		version: &operatorv1alpha1.SetupVersion{Current: "v0.31.6", Target: "v0.32.3", Group: "Shard", Components: []operatorv1alpha1.ComponentVersion{
			{Kind: "RootShard", Name: "root", Desired: "v0.32.3", Running: "v0.32.3"},
			{Kind: "Shard", Name: "a", Desired: "v0.31.4", Running: "v0.31.4", Pinned: true},
			{Kind: "Shard", Name: "b", Desired: "v0.32.3"},
		}}}
	var out bytes.Buffer
	require.NoError(t, printVersion(&out, root))
	assert.Equal(t, strings.Join([]string{
		"",
		"Release v0.31.6→v0.32.3, group Shard",
		"Upgrading=True Rolling: group Shard (3 of 5) to v0.32.3: waiting for Shard/b: its Deployment runs v0.31.6",
		"COMPONENT       DESIRED  RUNNING  PINNED",
		"RootShard/root  v0.32.3  v0.32.3  -",
		"Shard/a         v0.31.4  v0.31.4  pinned",
		"Shard/b         v0.32.3  -        -",
	}, "\n")+"\n", out.String())

	// Without spec.version, nothing.
	out.Reset()
	require.NoError(t, printVersion(&out, &node{kind: "RootShard", name: "root"}))
	assert.Empty(t, out.String())
}

func TestPrintRotations(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	started := metav1.NewTime(now.Add(-90 * time.Second))
	var out bytes.Buffer
	require.NoError(t, printRotations(&out, []operatorv1alpha1.CARotationState{
		{Authority: "server", Phase: operatorv1alpha1.CARotationPreparing, LastInitiationTime: &started},
		{Authority: "client", Phase: operatorv1alpha1.CARotationCompleted},
	}, now))
	assert.Equal(t, "CA       PHASE       STARTED\nserver   Preparing   1m30s ago\nclient   Completed   -\n", out.String())
}
