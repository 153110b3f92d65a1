package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
)

// linkTrustOf is what the Link name of ns says its remote's consumer shard-1 trusts of the
// link CA (fingerprints), and what its client certificate comes from; nil while it says
// nothing.
func linkTrustOf(t *testing.T, ns, name string) *operatorv1alpha1.LinkConsumerCA {
	out, err := stack.Kubectl(t.Context(), "get", "link", name, "-n", ns, "-o", "json")
	if err != nil {
		return nil
	}
	var l operatorv1alpha1.Link
	if json.Unmarshal([]byte(out), &l) != nil {
		return nil
	}
	for _, c := range l.Status.Consumers {
		for _, tr := range c.Trust {
			if c.Name == "shard-1" && tr.CA == string(pki.LinkCA) {
				return &tr
			}
		}
	}
	return nil
}

// TestLinkCARotation: rotating a RootShard's link CA through the rotation subresource works
// as for every other CA, with a remote linked from another cluster whose bootstrap Secret
// was carried once, before the rotation: Prepared waits until the remote trusts both link
// CAs, the remote renews its client certificate from the new one, Completed waits until it
// trusts the new one alone, the home's listener serves from the new one, the old one is
// gone, and the remote's link is up all along, with no Secret copied again.
func TestLinkCARotation(t *testing.T) {
	parallel(t, alone)
	const remote = "xlinkca-remote"
	// The one copy of the test: nothing is carried again, whatever the rotation does.
	ns, second := linkedShardAcrossClusters(t, "xlinkca-home", remote)
	bootstrap := linkpki.BootstrapName("eu-1")
	carried := readSecret(t, second, remote, bootstrap, linkpki.CACertKey)
	require.NotEmpty(t, carried)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := second.Kubectl(context.Background(), "get", "shard", "-n", remote, "-o",
				`jsonpath={range .items[*]}{.kind} {.metadata.name}: {range .status.conditions[*]}{.type}={.status} {.reason} {.message}; {end}{"\n"}{end}`)
			t.Logf("the second cluster's linked Shard:\n%s", out)
			out, _ = stack.Kubectl(context.Background(), "get", "link", "eu-1", "-n", ns, "-o", "jsonpath={.status.consumers}")
			t.Logf("the Link's consumers: %s", out)
		}
	})
	waitForOn(t, second, remote, "shard/shard-1", "LinkReady")
	waitForOn(t, second, remote, "shard/shard-1", "Available")

	old := secretCert(t, ns, "root-link-ca")
	oldFP := pki.Fingerprint(old)
	require.Eventually(t, func() bool {
		tr := linkTrustOf(t, ns, "eu-1")
		return tr != nil && slices.Equal(tr.Trusted, []string{oldFP}) && slices.Equal(tr.Served, []string{oldFP})
	}, 3*time.Minute, 2*time.Second, "the remote reports that it trusts the link CA and that its client certificate comes from it")

	_, stderr, err := rotate(t, ns, "rootshards", "root", "Start", "link")
	require.NoError(t, err, stderr)
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationPrepared, "link")
	next := secretCert(t, ns, "root-link-ca-next")
	require.False(t, next.Equal(old))
	nextFP := pki.Fingerprint(next)
	tr := linkTrustOf(t, ns, "eu-1")
	require.NotNil(t, tr)
	assert.ElementsMatch(t, []string{oldFP, nextFP}, tr.Trusted, "Prepared once the remote trusts both link CAs")

	// The leaves switched during Start: the remote renews its client certificate from the new
	// link CA as soon as the stream says the home signs from it.
	require.Eventually(t, func() bool {
		certs := certsIn(readSecret(t, second, remote, bootstrap, linkpki.ClientCertKey))
		return len(certs) > 0 && certs[0].CheckSignatureFrom(next) == nil
	}, 3*time.Minute, 2*time.Second, "the remote renews its client certificate from the new link CA")

	_, stderr, err = rotate(t, ns, "rootshards", "root", "Complete", "link")
	require.NoError(t, err, stderr)
	waitForRotation(t, ns, "root", operatorv1alpha1.CARotationCompleted, "link")

	tr = linkTrustOf(t, ns, "eu-1")
	require.NotNil(t, tr)
	assert.Equal(t, []string{nextFP}, tr.Trusted, "Completed once the remote trusts the new link CA alone")
	assert.Equal(t, []string{nextFP}, tr.Served, "the remote's client certificate comes from the new link CA")
	for _, kind := range []string{"secret", "certificate"} {
		_, err := stack.Kubectl(t.Context(), "get", kind, "root-link-ca", "-n", ns, "-o", "name")
		assert.Error(t, err, "the old link CA's %s is gone", kind)
	}

	// The home's listener serves from the new link CA: verified by it alone.
	home, err := stack.Kube.CoreV1().Secrets(ns).Get(t.Context(), bootstrap, metav1.GetOptions{})
	require.NoError(t, err)
	b, err := linkpki.ResolveBootstrap(home, time.Now())
	require.NoError(t, err)
	roots := x509.NewCertPool()
	roots.AddCert(next)
	require.Eventually(t, func() bool {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", b.ListenerURL.Host, &tls.Config{
			MinVersion: tls.VersionTLS13, ServerName: b.ServerName, RootCAs: roots, Certificates: []tls.Certificate{bootstrapPair(t, b)}})
		if err != nil {
			t.Logf("dialing the listener: %v", err)
			return false
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].CheckSignatureFrom(next) == nil
	}, time.Minute, 2*time.Second, "the listener serves from the new link CA")

	// The remote's link is up, on its client certificate from the new link CA, with the
	// bootstrap Secret's ca.crt as it was carried: nothing was copied again.
	require.Eventually(t, func() bool {
		return kubectlOn(t, second, "get", "shard", "shard-1", "-n", remote, "-o", `jsonpath={.status.conditions[?(@.type=="LinkReady")].status}`) == "True"
	}, 3*time.Minute, 2*time.Second, "the remote's link is up after the rotation")
	certs := certsIn(readSecret(t, second, remote, bootstrap, linkpki.ClientCertKey))
	require.NotEmpty(t, certs)
	assert.NoError(t, certs[0].CheckSignatureFrom(next), "the remote's client certificate comes from the new link CA")
	assert.Equal(t, carried, readSecret(t, second, remote, bootstrap, linkpki.CACertKey), "the bootstrap Secret's ca.crt is the one carried")
	bundled := certsIn(readSecret(t, second, remote, linkpki.BundlesName(bootstrap), linkpki.BundlesLinkCAKey))
	require.Len(t, bundled, 1, "the remote's bundles hold the new link CA alone")
	assert.True(t, bundled[0].Equal(next))
	waitForOn(t, second, remote, "shard/shard-1", "Available")
}
