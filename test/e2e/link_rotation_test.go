package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/test/framework"
)

// newProberOf is a prober with the certificate and key of a Secret, verifying the stand-in
// by the bundle roots.
func newProberOf(t *testing.T, name string, certPEM, keyPEM, roots []byte) *prober {
	t.Helper()
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	require.NoError(t, err)
	p := &prober{name: name, user: leaf.Subject.CommonName, cert: cert}
	p.setCA(t, roots)
	return p
}

// certificateIssuedBy is the Secret of the first Certificate of the stack s in ns whose
// issuer is named issuer and whose usages include usage.
func certificateIssuedBy(t *testing.T, s *framework.Stack, ns, issuer, usage string) string {
	t.Helper()
	out := kubectlOn(t, s, "get", "certificates", "-n", ns, "-o",
		`jsonpath={range .items[*]}{.spec.issuerRef.name} {.spec.secretName} {.spec.usages}{"\n"}{end}`)
	for _, line := range strings.Split(out, "\n") {
		f := strings.SplitN(line, " ", 3)
		if len(f) == 3 && f[0] == issuer && strings.Contains(f[2], usage) {
			return f[1]
		}
	}
	t.Fatalf("no Certificate in %s of the issuer %s for %s:\n%s", ns, issuer, usage, out)
	return ""
}

// TestRotationAcrossClustersWithoutASyncTool rotates the server and client CAs of a
// RootShard whose Shard runs in a second cluster, linked, through Start and Complete, while
// two clients call a stand-in serving that Shard's realized certificates (as the second
// cluster holds them, refreshed as the kubelet refreshes a pod's mounts) in a loop: one with
// a credential minted at home before Start (front-proxy-client CA), one with the Shard's own
// client certificate from before Start (client CA). Nothing is copied between the clusters
// after the bootstrap Secret, once: the link carries every bundle. The rotation waits for the
// linked Shard, and names it, while the second cluster's server is stopped; once it runs
// again, it reconnects and the rotation goes on. No request fails until Complete drops the
// old client CA, which then refuses the Shard's old client certificate.
func TestRotationAcrossClustersWithoutASyncTool(t *testing.T) {
	parallel(t, alone)
	const remote = "xrot-remote"
	ns, second := linkedShardAcrossClusters(t, "xrot-home", remote)
	waitForOn(t, second, remote, "shard/shard-1", "Available")
	require.Eventually(t, func() bool {
		out := kubectl(t, "get", "link", "eu-1", "-n", ns, "-o", "jsonpath={.status.consumers[0].trust[*].ca}")
		return strings.Contains(out, "server") && strings.Contains(out, "client")
	}, 3*time.Minute, 2*time.Second, "the home's Link records what the linked Shard trusts of the server and client CAs")

	// The stand-in serves the linked Shard's certificates and trusts its client CA bundle, as
	// its pods mount them in the second cluster.
	const joined = "shard-1-shard-root"
	mounts := func() framework.StandInOptions {
		return framework.StandInOptions{
			ServingCert: readSecret(t, second, remote, "shard-1-server", "tls.crt"), ServingKey: readSecret(t, second, remote, "shard-1-server", "tls.key"),
			ClientCA: readSecret(t, second, remote, joined+"-merged-client-ca", "tls.crt"),
		}
	}
	o := mounts()
	o.Name, o.ServerCA, o.ServerName = remote, readSecret(t, second, remote, joined+"-merged-ca-bundle", "tls.crt"), "localhost"
	standIn, err := second.StartStandIn(t.Context(), o)
	require.NoError(t, err)
	t.Cleanup(standIn.Stop)

	var minted kubeconfigResponse
	var stderr string
	require.Eventually(t, func() bool {
		minted, stderr, err = mintAs(t, stack.AdminKubeconfig, ns, "root", `{"spec":{}}`)
		return err == nil
	}, time.Minute, time.Second, "mint: %s", stderr)
	clientSecret := certificateIssuedBy(t, second, remote, joined+"-client-ca", "client auth")
	clientCert, clientKey := readSecret(t, second, remote, clientSecret, "tls.crt"), readSecret(t, second, remote, clientSecret, "tls.key")
	revoked := parseCert(t, clientCert)
	oldServerCA, oldClientCA := secretCert(t, ns, "root-server-ca"), secretCert(t, ns, "root-client-ca")
	require.NoError(t, revoked.CheckSignatureFrom(oldClientCA), "the Shard's client certificate %s comes from the home's client CA", clientSecret)

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	m := &mounter{}
	wg.Add(1)
	go m.run(ctx, standIn, mounts, revoked, &wg)
	home := newProber(t, "minted at home before Start", []byte(minted.Status.Kubeconfig))
	own := newProberOf(t, "the linked Shard's client certificate from before Start", clientCert, clientKey, o.ServerCA)
	for _, p := range []*prober{home, own} {
		wg.Add(1)
		go p.run(ctx, standIn.URL, &wg)
		require.Eventually(t, func() bool { _, ok, _, _, _ := p.results(time.Time{}); return ok >= 5 }, time.Minute, 200*time.Millisecond,
			"%s works before Start", p.name)
	}

	// The second cluster's server is stopped before Start: the rotation waits for the linked
	// Shard, which cannot tell it trusts the new CAs, and names it.
	second.KillServer()
	authorities := []string{"server", "client"}
	_, stderr, err = rotate(t, ns, "rootshards", "root", "Start", authorities...)
	require.NoError(t, err, stderr)
	require.Eventually(t, func() bool {
		msg := kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="CARotation")].message}`)
		return strings.Contains(msg, "Shard "+remote+"/shard-1 of Link eu-1 to trust both server CAs")
	}, 5*time.Minute, 2*time.Second, "the rotation names the linked Shard it waits for")
	for a, st := range rotations(t, ns, "root") {
		assert.Equal(t, operatorv1alpha1.CARotationPreparing, st.Phase, "the %s CA's rotation waits for the linked Shard", a)
	}

	// Started again, the second cluster's server reconnects, the link brings the bundles with
	// both CAs, the Shard's pods trust them, it says so, and the rotation is Prepared.
	require.NoError(t, second.StartServer(t.Context()))
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationPrepared, authorities...)
	assert.Equal(t, "True", kubectlOn(t, second, "get", "shard", "shard-1", "-n", remote, "-o", `jsonpath={.status.conditions[?(@.type=="LinkReady")].status}`),
		"the restarted remote server reconnected")
	newServerCA, newClientCA := secretCert(t, ns, "root-server-ca-next"), secretCert(t, ns, "root-client-ca-next")
	assert.True(t, holdsAll(certsIn(readSecret(t, second, remote, joined+"-server-ca-trust", "tls.crt")), oldServerCA, newServerCA),
		"while Prepared, the linked Shard's pods trust both server CAs")
	merged := certsIn(readSecret(t, second, remote, joined+"-merged-client-ca", "tls.crt"))
	assert.True(t, holdsEach(merged, oldClientCA, newClientCA), "while Prepared, the linked Shard's pods trust both client CAs (of %d in their bundle)", len(merged))
	// The clients pick up the server CA bundle with both, as the link brought it.
	bundle := readSecret(t, second, remote, joined+"-merged-ca-bundle", "tls.crt")
	require.True(t, holdsAll(certsIn(bundle), oldServerCA, newServerCA))
	home.setCA(t, bundle)
	own.setCA(t, bundle)
	assert.Eventually(t, func() bool { return signedByOn(t, second, remote, clientSecret, newClientCA) },
		3*time.Minute, 2*time.Second, "the linked Shard's client certificate is issued again from the new client CA, over the link")

	_, stderr, err = rotate(t, ns, "rootshards", "root", "Complete", authorities...)
	require.NoError(t, err, stderr)
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationCompleted, authorities...)

	// Completed waited for the linked Shard: it serves from the new server CA, and trusts the
	// new CAs alone.
	assert.True(t, signedByOn(t, second, remote, "shard-1-server", newServerCA), "the linked Shard serves from the new server CA")
	assert.True(t, holdsAll(certsIn(readSecret(t, second, remote, joined+"-server-ca-trust", "tls.crt")), newServerCA),
		"once Completed, the linked Shard's pods trust the new server CA alone")
	for _, c := range certsIn(readSecret(t, second, remote, joined+"-merged-client-ca", "tls.crt")) {
		assert.False(t, c.Equal(oldClientCA), "once Completed, the linked Shard's pods no longer trust the old client CA")
	}
	require.Eventually(t, func() bool { return !m.revoked().IsZero() }, 2*time.Minute, time.Second,
		"the stand-in's client CA bundle drops the old client CA")
	require.Eventually(t, func() bool { _, _, _, _, last := own.results(time.Time{}); return last != nil }, 2*time.Minute, 500*time.Millisecond,
		"the Shard's client certificate from before Start is refused once the old client CA is dropped")
	homeTotal, _, _, _, _ := home.results(time.Time{})
	require.Eventually(t, func() bool {
		total, _, _, _, last := home.results(time.Time{})
		return total > homeTotal+5 && last == nil
	},
		time.Minute, 200*time.Millisecond, "the credential minted at home works on after Complete")
	cancel()
	wg.Wait()

	for _, p := range []*prober{home, own} {
		total, ok, failed, first, _ := p.results(m.revoked())
		t.Logf("%s: %d requests, %d answered", p.name, total, ok)
		assert.Zero(t, failed, "%s failed before Complete dropped the old client CA: %v", p.name, first)
	}
	m.mu.Lock()
	t.Logf("the stand-in was refreshed %d times from the second cluster's Secrets", m.writes)
	m.mu.Unlock()
}

// holdsAll reports whether certs are exactly want, in any order.
func holdsAll(certs []*x509.Certificate, want ...*x509.Certificate) bool {
	return len(certs) == len(want) && holdsEach(certs, want...)
}

// holdsEach reports whether certs hold each of want.
func holdsEach(certs []*x509.Certificate, want ...*x509.Certificate) bool {
	for _, w := range want {
		found := false
		for _, c := range certs {
			found = found || c.Equal(w)
		}
		if !found {
			return false
		}
	}
	return true
}

// signedByOn is signedBy on the stack s.
func signedByOn(t *testing.T, s *framework.Stack, ns, name string, ca *x509.Certificate) bool {
	certs := certsIn(readSecret(t, s, ns, name, "tls.crt"))
	return len(certs) > 0 && certs[0].CheckSignatureFrom(ca) == nil
}
