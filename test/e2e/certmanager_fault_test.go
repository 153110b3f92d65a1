package e2e

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCertManagerAbsentAtStart starts the server on a host cluster without cert-manager:
// the setups say so, the server serves and does not spin; cert-manager's CRDs then appear
// without its controller, and the setups say which Certificates are not Ready; once the
// controller runs, everything converges, all without restarting the server.
func TestCertManagerAbsentAtStart(t *testing.T) {
	ctx := t.Context()
	// Whatever happens, the next tests get a whole stack.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		assert.NoError(t, stack.ApplyCertManagerCRDs(ctx), "restoring cert-manager's CRDs")
		assert.NoError(t, stack.StartCertManager(), "restoring cert-manager's controller")
		if stack.ServerExited() != nil {
			assert.NoError(t, stack.StartServer(ctx), "restoring the server")
		}
	})

	stack.StopServer()
	stack.StopCertManager()
	require.NoError(t, stack.DeleteCertManagerCRDs(ctx))
	// StartServer waits for readyz and for the APIService: neither depends on cert-manager.
	require.NoError(t, stack.StartServer(ctx))
	pid := stack.ServerPID()

	ns := namespace(t, "no-cert-manager")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, rootShardManifest("root", "kcp.example.com", 6443)+"---\n"+shardManifest))
	objects := []string{"rootshard/root", "shard/shard-1"}
	for _, o := range objects {
		waitForCertificatesReady(t, ns, o, "False/CertManagerNotInstalled")
		assert.Equal(t, "Provisioning", kubectl(t, "get", o, "-n", ns, "-o", "jsonpath={.status.phase}"), o)
	}
	assert.Equal(t, "cert-manager.io/v1 is not served by the host cluster; install cert-manager",
		kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="CertificatesReady")].message}`))
	assert.Eventually(t, func() bool {
		out, _ := stack.Kubectl(ctx, "get", "events", "-n", ns, "--field-selector", "involvedObject.name=root", "-o", "jsonpath={.items[*].reason}")
		return strings.Contains(out, "CertManagerNotInstalled")
	}, 30*time.Second, time.Second, "an Event says that cert-manager is missing")

	// The API is served, and the kubeconfig subresource answers: Conflict, no CA yet.
	_, err := stack.ServerGet(ctx, "/readyz")
	require.NoError(t, err)
	assert.Contains(t, kubectl(t, "get", "kcp", "-n", ns), "root")
	_, stderr, err := mintAs(t, stack.AdminKubeconfig, ns, "root", `{"spec":{}}`)
	require.Error(t, err)
	assert.Contains(t, stderr, "Conflict")

	// No spinning: over half a minute, a handful of reconciles at most, and no retries of
	// errors. A hot loop, even one slowed by the workqueue's backoff, does many more.
	before := reconciles(t)
	time.Sleep(30 * time.Second)
	after := reconciles(t)
	assert.Less(t, after["success"]+after["error"]-before["success"]-before["error"], 60.0,
		"reconciles in 30s while cert-manager is missing, by kind and result: %v", delta(before, after))
	assert.LessOrEqual(t, after["error"]-before["error"], 5.0, "failed reconciles in 30s while cert-manager is missing")
	require.NoError(t, stack.ServerExited())

	// The CRDs come, cert-manager's controller does not: the Certificates are created and the
	// setups say how many are not Ready, rather than spinning.
	require.NoError(t, stack.ApplyCertManagerCRDs(ctx))
	for _, o := range objects {
		waitForCertificatesReady(t, ns, o, "False/CertificatesPending")
	}
	message := kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="CertificatesReady")].message}`)
	assert.Regexp(t, regexp.MustCompile(`^16 of 16 certificates are not Ready, waiting for cert-manager to issue them: kcp-pki-ca, root-ca, `), message)
	assert.Len(t, nonEmptyLines(kubectl(t, "get", "certificates", "-n", ns, "-l", "operator.kcp.io/rootshard=root", "-o", "name")), 15,
		"the root CA, 7 intermediates (the etcd CAs included), and 7 leaves (the mount proxy's and the server's own identity included)")

	// cert-manager's controller starts: everything converges, in the same server process.
	require.NoError(t, stack.StartCertManager())
	for _, o := range objects {
		waitFor(t, ns, o, "Available")
		waitFor(t, ns, o, "CertificatesReady")
		assert.Equal(t, "Running", kubectl(t, "get", o, "-n", ns, "-o", "jsonpath={.status.phase}"), o)
	}
	for _, line := range nonEmptyLines(kubectl(t, "get", "certificates", "-n", ns, "-o",
		`jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`)) {
		name, ready, _ := strings.Cut(line, "=")
		assert.Equal(t, "True", ready, "Certificate %s is not Ready", name)
	}
	minted, stderr, err := mintAs(t, stack.AdminKubeconfig, ns, "root", `{"spec":{}}`)
	require.NoError(t, err, stderr)
	assert.NotEmpty(t, minted.Status.Kubeconfig)
	require.NoError(t, stack.ServerExited())
	assert.Equal(t, pid, stack.ServerPID(), "the server was not restarted")
}

// waitForCertificatesReady waits until object's CertificatesReady condition is want, as
// status/reason.
func waitForCertificatesReady(t *testing.T, ns, object, want string) {
	t.Helper()
	var got string
	if !assert.Eventually(t, func() bool {
		got, _ = stack.Kubectl(t.Context(), "get", object, "-n", ns,
			"-o", `jsonpath={.status.conditions[?(@.type=="CertificatesReady")].status}/{.status.conditions[?(@.type=="CertificatesReady")].reason}`)
		return got == want
	}, 2*time.Minute, time.Second) {
		t.Fatalf("%s: CertificatesReady is %q, want %q", object, got, want)
	}
}

// reconcileLine is one count of kcp_setups_reconciles_total.
var reconcileLine = regexp.MustCompile(`(?m)^kcp_setups_reconciles_total\{kind="([^"]+)",result="([^"]+)"\} (\S+)$`)

// delta is what grew from before to after.
func delta(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, v := range after {
		if v != before[k] {
			d[k] = v - before[k]
		}
	}
	return d
}

// reconciles are the server's reconciles so far, of every kind, by result.
func reconciles(t *testing.T) map[string]float64 {
	t.Helper()
	metrics, err := stack.ServerGet(t.Context(), "/metrics")
	require.NoError(t, err)
	out := map[string]float64{}
	for _, m := range reconcileLine.FindAllStringSubmatch(metrics, -1) {
		n, err := strconv.ParseFloat(m[3], 64)
		require.NoError(t, err)
		out[m[2]] += n
		out[m[1]+"/"+m[2]] += n
	}
	return out
}
