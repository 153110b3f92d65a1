package e2e

import (
	"context"
	"maps"
	"regexp"
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
	s := onFaultStack(t)
	ctx := t.Context()
	// Whatever happens, the next fault tests get a whole stack.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		assert.NoError(t, s.ApplyCertManagerCRDs(ctx), "restoring cert-manager's CRDs")
		assert.NoError(t, s.StartCertManager(), "restoring cert-manager's controller")
		if s.ServerExited() != nil {
			assert.NoError(t, s.StartServer(ctx), "restoring the server")
		}
	})

	s.StopServer()
	s.StopCertManager()
	require.NoError(t, s.DeleteCertManagerCRDs(ctx))
	// StartServer waits for readyz and for the APIService: neither depends on cert-manager.
	require.NoError(t, s.StartServer(ctx))
	pid := s.ServerPID()

	ns := namespace(t, "no-cert-manager")
	givenRootShard(t, ns, withObjects(shardManifest), until())
	objects := []string{"rootshard/root", "shard/shard-1"}
	for _, o := range objects {
		waitForCertificatesReady(t, ns, o, "False/CertManagerNotInstalled")
		assert.Equal(t, "Provisioning", kubectl(t, "get", o, "-n", ns, "-o", "jsonpath={.status.phase}"), o)
	}
	assert.Equal(t, "cert-manager.io/v1 is not served by the host cluster; install cert-manager",
		kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="CertificatesReady")].message}`))
	assert.Eventually(t, func() bool {
		out, _ := s.Kubectl(ctx, "get", "events", "-n", ns, "--field-selector", "involvedObject.name=root", "-o", "jsonpath={.items[*].reason}")
		return strings.Contains(out, "CertManagerNotInstalled")
	}, 30*time.Second, time.Second, "an Event says that cert-manager is missing")

	// The API is served, and the kubeconfig subresource answers: Conflict, no CA yet.
	_, err := s.ServerGet(ctx, "/readyz")
	require.NoError(t, err)
	assert.Contains(t, kubectl(t, "get", "kcp", "-n", ns), "root")
	_, stderr, err := mintAs(t, s.AdminKubeconfig, ns, "root", `{"spec":{}}`)
	require.Error(t, err)
	assert.Contains(t, stderr, "Conflict")

	// No spinning: once the objects' first reconciles have settled, over half a minute, they
	// are reconciled a few times at most (cert-manager's API is polled every 10 s), and never
	// fail. Only the test's own objects are counted, from the server's log: the restart made
	// the server reconcile the other fault tests' objects on the stack too. A hot loop
	// never settles; a loop slowed by a delay or by the workqueue's backoff counts more.
	before := settledReconciles(t, ns)
	time.Sleep(30 * time.Second)
	grew := delta(before, ownReconciles(t, ns))
	t.Logf("reconciles of the test's objects before the window: %v; in it: %v", before, grew)
	assert.LessOrEqual(t, grew["success"]+grew["error"], 3*len(objects),
		"reconciles of the test's objects in 30 s while cert-manager is missing, by object and result: %v", grew)
	assert.Zero(t, grew["error"], "failed reconciles of the test's objects in 30 s while cert-manager is missing: %v", grew)
	require.NoError(t, s.ServerExited())

	// The CRDs come, cert-manager's controller does not: the Certificates are created and the
	// setups say how many are not Ready, rather than spinning.
	require.NoError(t, s.ApplyCertManagerCRDs(ctx))
	for _, o := range objects {
		waitForCertificatesReady(t, ns, o, "False/CertificatesPending")
	}
	message := kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="CertificatesReady")].message}`)
	assert.Regexp(t, regexp.MustCompile(`^19 of 19 certificates are not Ready, waiting for cert-manager to issue them: kcp-pki-ca, root-ca, `), message)
	assert.Len(t, nonEmptyLines(kubectl(t, "get", "certificates", "-n", ns, "-l", "operator.kcp.io/rootshard=root", "-o", "name")), 18,
		"the root CA, 7 intermediates (the etcd CAs included), 7 leaves (the mount proxy's and the server's own identity included) and the 3 of the internal front proxy")

	// cert-manager's controller starts: everything converges, in the same server process.
	require.NoError(t, s.StartCertManager())
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
	minted, stderr, err := mintAs(t, s.AdminKubeconfig, ns, "root", `{"spec":{}}`)
	require.NoError(t, err, stderr)
	assert.NotEmpty(t, minted.Status.Kubeconfig)
	require.NoError(t, s.ServerExited())
	assert.Equal(t, pid, s.ServerPID(), "the server was not restarted")
}

// waitForCertificatesReady waits until object's CertificatesReady condition is want, as
// status/reason.
func waitForCertificatesReady(t *testing.T, ns, object, want string) {
	t.Helper()
	var got string
	if !assert.Eventually(t, func() bool {
		got, _ = stackOf(t).Kubectl(t.Context(), "get", object, "-n", ns,
			"-o", `jsonpath={.status.conditions[?(@.type=="CertificatesReady")].status}/{.status.conditions[?(@.type=="CertificatesReady")].reason}`)
		return got == want
	}, 2*time.Minute, time.Second) {
		t.Fatalf("%s: CertificatesReady is %q, want %q", object, got, want)
	}
}

// ownReconciles are the reconciles so far of the objects in namespace ns, by object and
// result, and by result alone.
func ownReconciles(t *testing.T, ns string) map[string]int {
	t.Helper()
	counts, err := stackOf(t).Reconciles(ns)
	require.NoError(t, err)
	return counts
}

// settledReconciles waits until the objects in ns have not been reconciled for 5 s, and
// returns their reconciles so far; it fails the test when they are still reconciled after a
// minute, as a hot loop would be.
func settledReconciles(t *testing.T, ns string) map[string]int {
	t.Helper()
	const quiet, limit = 5 * time.Second, time.Minute
	last := ownReconciles(t, ns)
	first, since := last, time.Now()
	for deadline := time.Now().Add(limit); time.Since(since) < quiet; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("the objects in %s are still reconciled after %s, with never %s between two: %v",
				ns, limit, quiet, delta(first, last))
		}
		if now := ownReconciles(t, ns); !maps.Equal(now, last) {
			last, since = now, time.Now()
		}
	}
	return last
}

// delta is what grew from before to after.
func delta(before, after map[string]int) map[string]int {
	d := map[string]int{}
	for k, v := range after {
		if v != before[k] {
			d[k] = v - before[k]
		}
	}
	return d
}
