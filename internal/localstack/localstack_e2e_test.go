//go:build e2e

// The local stack's own end-to-end test: `make test-e2e` runs it with -tags e2e; `make
// test-unit` builds this package without the tag, and so without a stack.
package localstack_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

// localSetup is a setup as a `make run` user writes one: a RootShard without spec.etcd
// (a managed etcd, on the stack's provisioner), a Shard of it, and a Kubeconfig that binds
// roles in kcp.
const localSetup = `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: root
spec:
  external:
    hostname: kcp.example.com
---
apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: shard-1
spec:
  rootShard: {ref: {name: root}}
  etcd: {endpoints: ["https://etcd-shard:2379"]}
---
apiVersion: operator.kcp.io/v1alpha1
kind: Kubeconfig
metadata:
  name: alice
spec:
  target: {rootShardRef: {name: root}}
  username: alice
  validity: 24h
  secretRef: {name: alice-kubeconfig}
  authorization:
    clusterRoleBindings:
      clusterRoles: [view]
`

// keptSetup is a RootShard with a managed etcd of one member, run across a restart.
const keptSetup = `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: kept
spec:
  external:
    hostname: kept.example.com
  etcd:
    managed:
      replicas: 1
`

// TestLocalStackRestartsOnKeptState starts a stack of its own as `make run` does (kept state,
// embedded etcd, no kcp), stops it and starts it again on the same state, as a second `make
// run` does: the fake node advertises the port kwok listens on now, so `kubectl logs` and
// `kubectl port-forward` reach a pod made in the first run, and a managed etcd's member run in
// the first run runs again on its data and ports. On that stack, a setup runs and says that
// no kcp can be asked, and deleting its Shard or Kubeconfig does not wait for kcp.
func TestLocalStackRestartsOnKeptState(t *testing.T) {
	dir := t.TempDir()
	start := func() *localstack.Stack {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		defer cancel()
		s, err := localstack.Start(ctx, localstack.LocalUp(dir))
		require.NoError(t, err)
		return s
	}
	advertised := func(s *localstack.Stack) int32 {
		n, err := s.Kube.CoreV1().Nodes().Get(t.Context(), localstack.FakeNode, metav1.GetOptions{})
		require.NoError(t, err)
		return n.Status.DaemonEndpoints.KubeletEndpoint.Port
	}

	first := start()
	kubectlOn(t, first, "create", "deployment", "web", "-n", "default", "--image=registry.example.com/web:1", "--port=8080")
	kubectlOn(t, first, "rollout", "status", "deployment/web", "-n", "default", "--timeout=2m")
	firstPort := advertised(first)
	kubectlOn(t, first, "create", "namespace", "kept")
	kubectlOn(t, first, "apply", "-n", "kept", "-f", writeManifest(t, keptSetup))
	waitForReasonOn(t, first, "kept", "rootshard/kept", "EtcdReady", "True", "Healthy")
	keptPorts := func() string {
		t.Helper()
		files, err := filepath.Glob(filepath.Join(dir, "etcd-members", "kept-kept-etcd-*", "ports.json"))
		require.NoError(t, err)
		require.Len(t, files, 1)
		data, err := os.ReadFile(files[0])
		require.NoError(t, err)
		return string(data)
	}
	portsBefore := keptPorts()
	first.Stop()

	second := start()
	t.Cleanup(second.Stop)
	// The member runs again on its data (etcd restarts a member whose write-ahead log it
	// finds) and on its ports, which the pods' forwards and the member's own record name.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 2, strings.Count(membersLog(t, second), "kept/kept-etcd: member kept-etcd-0 runs,"), "once a run")
	}, 2*time.Minute, time.Second)
	assert.Equal(t, portsBefore, keptPorts())
	memberLog, err := os.ReadFile(second.Path("logs", "etcd-kept-kept-etcd-0.log"))
	require.NoError(t, err)
	assert.Contains(t, string(memberLog), "restarting local member")
	waitForReasonOn(t, second, "kept", "rootshard/kept", "EtcdReady", "True", "Healthy")
	t.Logf("kwok's node port: %d in the first run, %d in the second", firstPort, advertised(second))
	kwokPort := regexp.MustCompile(`--node-port=(\d+)`).FindStringSubmatch(strings.Join(second.CommandLine("kwok"), " "))
	require.NotNil(t, kwokPort, "kwok's command line: %v", second.CommandLine("kwok"))
	assert.Equal(t, kwokPort[1], strconv.Itoa(int(advertised(second))), "the node advertises the port kwok listens on")
	kubectlOn(t, second, "rollout", "status", "deployment/web", "-n", "default", "--timeout=2m")

	assert.Equal(t, localstack.PodLog, kubectlOn(t, second, "logs", "deployment/web", "-n", "default"),
		"kwok answers for the pod, through kube-apiserver and the node's port")

	// A port of the pod leads to a listener of the test's, through kube-apiserver's
	// port-forward to the node, as the server's port-forward dialer reaches kcp.
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = listener.Close() })
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(conn, "hello from behind the pod\n")
			_ = conn.Close()
		}
	}()
	forward := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterPortForward",
		"metadata": map[string]any{"name": "web"},
		"spec": map[string]any{
			"selector": map[string]any{"matchNamespaces": []any{"default"}},
			"forwards": []any{map[string]any{"ports": []any{int64(8080)},
				"target": map[string]any{"address": "127.0.0.1", "port": int64(listener.Addr().(*net.TCPAddr).Port)}}},
		},
	}}
	_, err = second.Dynamic.Resource(schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "clusterportforwards"}).
		Create(t.Context(), forward, metav1.CreateOptions{})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := second.KubectlCommand(ctx, second.AdminKubeconfig, "port-forward", "-n", "default", "deployment/web", ":8080")
	local := portForward(t, cmd)
	conn, err := net.DialTimeout("tcp", local, 10*time.Second)
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	line, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err, "reading through the port-forward")
	assert.Equal(t, "hello from behind the pod\n", line)

	noKcp(t, second)
}

// noKcp applies localSetup on s, a stack without kcp: the RootShard reaches Running on a
// provisioned volume, KcpReady and AuthorizationProvisioned say Unknown with reason
// NoKcpDialer, the managed etcd's members run (Options.EtcdMembers) and EtcdReady says what
// etcd's /health answers through the pods, and the Shard and the Kubeconfig are deleted
// without waiting for kcp.
func noKcp(t *testing.T, s *localstack.Stack) {
	t.Helper()
	const ns = "default"
	kubectlOn(t, s, "apply", "-n", ns, "-f", writeManifest(t, localSetup))
	for _, o := range []string{"rootshard/root", "shard/shard-1"} {
		kubectlOn(t, s, "wait", "-n", ns, "--for=jsonpath={.status.phase}=Running", o, "--timeout=3m")
		waitForReasonOn(t, s, ns, o, "KcpReady", "Unknown", "NoKcpDialer")
	}
	waitForReasonOn(t, s, ns, "rootshard/root", "EtcdReady", "True", "Healthy")
	membersFollowTheirStatefulSet(t, s, ns)
	assert.Contains(t, kubectlOn(t, s, "get", "rootshard/root", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="KcpReady")].message}`),
		"--kcp-dialer=none")
	waitForReasonOn(t, s, ns, "kubeconfig/alice", "AuthorizationProvisioned", "Unknown", "NoKcpDialer")

	kubectlOn(t, s, "delete", "-n", ns, "shard/shard-1", "--timeout=2m")
	kubectlOn(t, s, "delete", "-n", ns, "kubeconfig/alice", "--timeout=2m")
	events := kubectlOn(t, s, "get", "events", "-n", ns, "-o", `jsonpath={range .items[*]}{.reason}: {.message}{"\n"}{end}`)
	assert.Regexp(t, `(?m)^DeregistrationSkipped: kcp's Shard "shard-1" was not deleted from the root workspace: .*--kcp-dialer=none`, events)
	assert.Regexp(t, `(?m)^KcpCleanupSkipped: The ClusterRoleBindings in kcp workspace root are left in place: .*--kcp-dialer=none`, events)

	// The RootShard's StatefulSet goes with it, and its members with their data.
	kubectlOn(t, s, "delete", "-n", ns, "rootshard/root", "--timeout=2m")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, membersLog(t, s), ns+"/root-etcd: stopped its members")
		dirs, err := filepath.Glob(s.Path("etcd-members", ns+"-root-etcd-*"))
		require.NoError(c, err)
		assert.Empty(c, dirs, "the members' data goes with the StatefulSet")
	}, 2*time.Minute, time.Second)
}

// membersFollowTheirStatefulSet changes the pod template of the RootShard root's managed etcd
// in ns, as a renewed certificate does: the stack's runner restarts its members one at a
// time, each on its data, and etcd answers the server again.
func membersFollowTheirStatefulSet(t *testing.T, s *localstack.Stack, ns string) {
	t.Helper()
	before := membersLog(t, s)
	for i := range 3 {
		assert.Contains(t, before, fmt.Sprintf("%s/root-etcd: member root-etcd-%d runs", ns, i))
	}
	kubectlOn(t, s, "patch", "statefulset/root-etcd", "-n", ns, "--type=merge",
		"-p", `{"spec":{"template":{"metadata":{"annotations":{"example.com/restarted":"1"}}}}}`)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		restarts := regexp.MustCompile(ns+`/root-etcd: member (root-etcd-\d) runs again with the new template`).
			FindAllStringSubmatch(strings.TrimPrefix(membersLog(t, s), before), -1)
		var order []string
		for _, m := range restarts {
			order = append(order, m[1])
		}
		assert.Equal(c, []string{"root-etcd-0", "root-etcd-1", "root-etcd-2"}, order, "one at a time, each once")
	}, 3*time.Minute, time.Second)
	waitForReasonOn(t, s, ns, "rootshard/root", "EtcdReady", "True", "Healthy")

	// A member that ends is started again, as kubelet restarts a container.
	require.NoError(t, syscall.Kill(memberPID(t, s, "root-etcd-1"), syscall.SIGKILL))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, membersLog(t, s), ns+"/root-etcd: member root-etcd-1 runs again\n")
	}, 2*time.Minute, time.Second)
	waitForReasonOn(t, s, ns, "rootshard/root", "EtcdReady", "True", "Healthy")
}

// memberPID is the process ID of the etcd member pod runs as on s.
func memberPID(t *testing.T, s *localstack.Stack, pod string) int {
	t.Helper()
	cmdlines, err := filepath.Glob("/proc/[0-9]*/cmdline")
	require.NoError(t, err)
	for _, f := range cmdlines {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // ended meanwhile
		}
		args := strings.Split(string(data), "\x00")
		if len(args) > 0 && strings.HasPrefix(args[0], s.Bin("etcd")) && slices.Contains(args, "--name="+pod) &&
			strings.Contains(string(data), s.Path("etcd-members")) {
			pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			require.NoError(t, err)
			return pid
		}
	}
	t.Fatalf("no process of member %s", pod)
	return 0
}

// membersLog is what the stack's etcd runner logged so far.
func membersLog(t *testing.T, s *localstack.Stack) string {
	t.Helper()
	data, err := os.ReadFile(s.Path("logs", "etcd-members.log"))
	require.NoError(t, err)
	return string(data)
}

// kubectlOn runs kubectl as the admin of the stack s and fails the test on error.
func kubectlOn(t *testing.T, s *localstack.Stack, args ...string) string {
	t.Helper()
	out, err := s.Kubectl(t.Context(), args...)
	require.NoError(t, err, "kubectl %s: %s", strings.Join(args, " "), out)
	return out
}

// writeManifest writes content to a file of the test's and returns its path.
func writeManifest(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// waitForReasonOn waits until object in ns on s has condition with status and reason.
func waitForReasonOn(t *testing.T, s *localstack.Stack, ns, object, condition, status, reason string) {
	t.Helper()
	var out string
	require.Eventually(t, func() bool {
		out, _ = s.Kubectl(t.Context(), "get", object, "-n", ns, "-o",
			`jsonpath={.status.conditions[?(@.type=="`+condition+`")].status}/{.status.conditions[?(@.type=="`+condition+`")].reason}`)
		return out == status+"/"+reason
	}, 2*time.Minute, 500*time.Millisecond, "%s %s=%s (%s), last %q", object, condition, status, reason, out)
}

// portForward starts cmd, a `kubectl port-forward`, and returns the local address it
// forwards from; the test's end stops it.
func portForward(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	forwarding := regexp.MustCompile(`^Forwarding from (127\.0\.0\.1:\d+) -> `)
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if m := forwarding.FindStringSubmatch(lines.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return m[1]
		}
	}
	t.Fatalf("kubectl port-forward ended without forwarding: %s", stderr.String())
	return ""
}
