package e2e

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/link/home"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// linkOf is the Link name of the RootShard root with identity, admitting Shards whose
// serving certificates are within *.eu.example.com.
func linkOf(name, identity string) string {
	return `apiVersion: operator.kcp.io/v1alpha1
kind: Link
metadata:
  name: ` + name + `
spec:
  rootShardRef: {name: root}
  identity: ` + identity + `
  consumers: [Shard]
  dnsNames: ["*.eu.example.com"]
`
}

// givenLink applies the Link name of identity to ns, waits until it is Ready, and returns
// its bootstrap Secret, resolved as a remote resolves it.
func givenLink(t *testing.T, ns, name, identity string) *linkpki.Bootstrapped {
	t.Helper()
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, linkOf(name, identity)))
	waitFor(t, ns, "link/"+name, "Ready")
	s, err := stack.Kube.CoreV1().Secrets(ns).Get(t.Context(), linkpki.BootstrapName(name), metav1.GetOptions{})
	require.NoError(t, err)
	b, err := linkpki.ResolveBootstrap(s, time.Now())
	require.NoError(t, err)
	// Ready says the serving certificate is issued; the listener's own cache of it may hear
	// of it a moment later, as a remote's retry would find.
	tlsConfig := linkClient(b, bootstrapPair(t, b)).Transport.(*http.Transport).TLSClientConfig
	var dialErr error
	require.Eventually(t, func() bool {
		var conn *tls.Conn
		if conn, dialErr = tls.Dial("tcp", b.ListenerURL.Host, tlsConfig); dialErr == nil {
			_ = conn.Close()
		}
		return dialErr == nil
	}, time.Minute, 500*time.Millisecond, "the listener serves the RootShard of the Link %s: %v", name, dialErr)
	return b
}

// linkClient dials the listener of b with the pair, as a remote does: SNI the server name,
// the listener verified by the link CA alone.
func linkClient(b *linkpki.Bootstrapped, pair tls.Certificate) *http.Client {
	roots := x509.NewCertPool()
	for _, c := range b.Trust.Certs {
		roots.AddCert(c)
	}
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{pair}, RootCAs: roots, ServerName: b.ServerName, MinVersion: tls.VersionTLS13}}}
}

// bootstrapPair is the client pair of a bootstrap Secret.
func bootstrapPair(t *testing.T, b *linkpki.Bootstrapped) tls.Certificate {
	t.Helper()
	pair, err := tls.X509KeyPair(b.Client.PEM.Cert, b.Client.PEM.Key)
	require.NoError(t, err)
	return pair
}

// shardServerCSR is a CSR as cert-manager makes one for a linked Shard's serving
// certificate: CN the shard's name, DNS SANs within the Link's dnsNames and localhost.
func shardServerCSR(t *testing.T, name string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name},
		DNSNames: []string{name + ".eu.example.com", "localhost"}}, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// sign posts a signature of a Shard's serving certificate to the listener with client.
func sign(t *testing.T, b *linkpki.Bootstrapped, client *http.Client, name string) (*http.Response, []byte) {
	t.Helper()
	body, err := json.Marshal(link.SignRequest{Consumer: link.ConsumerRef{Namespace: "remote", Name: name, UID: "remote-uid"},
		Request: shardServerCSR(t, name)})
	require.NoError(t, err)
	resp, err := client.Post(b.ListenerURL.String()+"/v1/sign/Shard/server", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	return resp, out.Bytes()
}

// TestLinkListenerServesABootstrap plays decision 6 of issue 40 on the shared stack, whose
// server serves the link listener on loopback: a Link of a realized RootShard becomes Ready
// with a bootstrap Secret that names the listener; a remote that holds it gets the
// shard-join's data without any private key over the bundle stream, and a Shard's serving
// certificate signed by the RootShard's server CA through a CertificateRequest.
func TestLinkListenerServesABootstrap(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "link-listener")
	givenRootShard(t, ns)
	b := givenLink(t, ns, "eu-1", "eu-1.links.example.com")
	assert.Equal(t, "https://127.0.0.1:"+strconv.Itoa(stack.LinkPort), b.ListenerURL.String())
	client := linkClient(b, bootstrapPair(t, b))

	resp, err := client.Get(b.ListenerURL.String() + link.BundlesPath)
	require.NoError(t, err)
	lines := bufio.NewScanner(resp.Body)
	require.True(t, lines.Scan(), "the stream's first message: %v", lines.Err())
	resp.Body.Close()
	var first link.StreamMessage
	require.NoError(t, json.Unmarshal(lines.Bytes(), &first))
	require.Equal(t, link.BundlesMessage, first.Type)
	join, err := stack.Kube.CoreV1().Secrets(ns).Get(t.Context(), reference.ShardJoin.Name("root"), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, []link.ConsumerKind{link.Shard}, keysOf(first.Bundles.References), "the kinds the Link allows alone")
	assert.Equal(t, linkpki.KeepOnlyKeyless(join.Data), first.Bundles.References[link.Shard], "the shard-join's keyless data")
	assert.Contains(t, first.Bundles.References[link.Shard], reference.CertKey("server"))
	for k := range first.Bundles.References[link.Shard] {
		assert.False(t, strings.HasSuffix(k, ".key"), "the key %s", k)
	}
	assert.Equal(t, b.Trust.PEM, first.Bundles.LinkCA)

	resp, body := sign(t, b, client, "shard-1")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var signed link.SignResponse
	require.NoError(t, json.Unmarshal(body, &signed))
	block, _ := pem.Decode(signed.Certificate)
	require.NotNil(t, block)
	leaf, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	assert.Equal(t, "shard-1", leaf.Subject.CommonName)
	assert.ElementsMatch(t, []string{"shard-1.eu.example.com", "localhost"}, leaf.DNSNames)
	serverCA, err := stack.Kube.CoreV1().Secrets(ns).Get(t.Context(), "root-server-ca", metav1.GetOptions{})
	require.NoError(t, err)
	ca := parseFirstCertificate(t, serverCA.Data[corev1.TLSCertKey])
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	assert.NoError(t, err, "the leaf chains to the RootShard's server CA")
	// cert-manager's ca: the top of the signing CA's chain (the namespace's bootstrap CA
	// here), which the chain it sent leads to.
	top := x509.NewCertPool()
	top.AddCert(parseFirstCertificate(t, signed.CA))
	chain := x509.NewCertPool()
	for rest := signed.Certificate; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		c, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		chain.AddCert(c)
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: top, Intermediates: chain, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	assert.NoError(t, err, "the chain leads to the answer's CA")
	left := kubectl(t, "get", "certificaterequests", "-n", ns, "-l", pki.LabelComponent+"="+home.SigningRole, "-o", "name")
	assert.Empty(t, strings.TrimSpace(left), "the CertificateRequest is deleted once answered")
}

func keysOf[K comparable, V any](m map[K]V) []K {
	var out []K
	for k := range m {
		out = append(out, k)
	}
	return out
}

func parseFirstCertificate(t *testing.T, pemData []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(pemData)
	require.NotNil(t, block, "no PEM certificate")
	c, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return c
}

// linkCACertificate makes a cert-manager Certificate against the RootShard's link CA Issuer
// with dns and uri SANs for client auth, as an admin of the host cluster can, and returns its
// pair.
func linkCACertificate(t *testing.T, ns, name, dns, uri string) tls.Certificate {
	t.Helper()
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, `apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: `+name+`
spec:
  secretName: `+name+`
  commonName: `+dns+`
  dnsNames: [`+dns+`]
  uris: ["`+uri+`"]
  usages: [digital signature, key encipherment, client auth]
  privateKey: {algorithm: ECDSA, size: 256}
  issuerRef: {name: root-link-ca, kind: Issuer, group: cert-manager.io}
`))
	waitFor(t, ns, "certificate/"+name, "Ready")
	s, err := stack.Kube.CoreV1().Secrets(ns).Get(t.Context(), name, metav1.GetOptions{})
	require.NoError(t, err)
	pair, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	require.NoError(t, err)
	return pair
}

// strangerCertificate is a client certificate with dns and uri SANs from a CA of its own.
func strangerCertificate(t *testing.T, dns, uri string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stranger"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, key.Public(), key)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	u, err := url.Parse(uri)
	require.NoError(t, err)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dns},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{dns}, URIs: []*url.URL{u},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca, leafKey.Public(), key)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: leafKey}
}

var certificateRequests = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificaterequests"}

// TestLinkPinsItsSAN is the test of SAN pinning, against the served listener: a
// client certificate of the link CA with another remote's SAN, one whose SAN no Link
// declares, one with a Link's SANs from another CA, and the certificate of a deleted Link
// are each refused with a bare 403, and no CertificateRequest is made for any.
func TestLinkPinsItsSAN(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "link-pins")
	givenRootShard(t, ns)
	eu1 := givenLink(t, ns, "eu-1", "eu-1.links.example.com")
	us1 := givenLink(t, ns, "us-1", "us-1.links.example.com")
	gone := givenLink(t, ns, "gone-1", "gone-1.links.example.com")
	goneClient := linkClient(gone, bootstrapPair(t, gone))
	resp, body := sign(t, gone, goneClient, "shard-0")
	require.Equal(t, http.StatusOK, resp.StatusCode, "the Link's certificate is good while it exists: %s", body)

	otherSAN := linkCACertificate(t, ns, "other-san", "us-1.links.example.com", link.URI(ns, "eu-1", string(eu1.Link.UID)))
	undeclared := linkCACertificate(t, ns, "undeclared", "nobody.links.example.com", link.URI(ns, "eu-1", string(eu1.Link.UID)))
	stranger := strangerCertificate(t, "eu-1.links.example.com", link.URI(ns, "eu-1", string(eu1.Link.UID)))
	kubectl(t, "delete", "link", "gone-1", "-n", ns, "--wait=true", "--timeout=2m")

	// The listener's CertificateRequests alone (cert-manager makes its own for Certificates),
	// from now on.
	signings := metav1.ListOptions{LabelSelector: pki.LabelComponent + "=" + home.SigningRole}
	made, err := stack.Dynamic.Resource(certificateRequests).Namespace(ns).List(t.Context(), signings)
	require.NoError(t, err)
	signings.ResourceVersion = made.GetResourceVersion()
	w, err := stack.Dynamic.Resource(certificateRequests).Namespace(ns).Watch(t.Context(), signings)
	require.NoError(t, err)
	defer w.Stop()
	for name, tc := range map[string]struct {
		b      *linkpki.Bootstrapped
		client *http.Client
	}{
		"the link CA's with another remote's SAN": {us1, linkClient(us1, otherSAN)},
		"the link CA's with a SAN no Link has":    {eu1, linkClient(eu1, undeclared)},
		"another CA's with the Link's SANs":       {eu1, linkClient(eu1, stranger)},
		"a deleted Link's":                        {gone, goneClient},
	} {
		resp, body := sign(t, tc.b, tc.client, "shard-1")
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, name)
		assert.JSONEq(t, `{"reason":"Forbidden"}`, string(body), name)
	}
	deadline := time.After(5 * time.Second)
	for {
		select {
		case e := <-w.ResultChan():
			assert.NotEqual(t, watch.Added, e.Type, "a CertificateRequest was made")
			continue
		case <-deadline:
		}
		break
	}
	events := kubectl(t, "get", "events", "-n", ns, "--field-selector", "involvedObject.name=us-1,reason="+string(link.DeclarationMismatch), "-o", "name")
	assert.NotEmpty(t, strings.TrimSpace(events), "the refusal of a certificate of the Link's CA is a Warning Event on the Link it names")
}

// report posts the remote's report of the Shard b/s-1 with sequence over the link, trusting
// the CA of fingerprint fp for the server CA.
func report(t *testing.T, b *linkpki.Bootstrapped, client *http.Client, sequence int64, fp string) *http.Response {
	t.Helper()
	ev := link.Event{ConsumerKey: link.ConsumerKey{Kind: link.Shard, Namespace: "b", Name: "s-1"}, UID: "remote-uid-1", Generation: 1, Sequence: sequence,
		State: link.ConsumerReport{Realized: true, Available: true, KcpShard: "s-1", BaseURL: "https://s-1.eu.example.com:6443",
			CAs: map[pki.CA]link.CATrust{pki.ServerCA: {Trusted: []string{fp}, Served: []string{fp}}}}}
	body, err := json.Marshal(ev)
	require.NoError(t, err)
	resp, err := client.Post(b.ListenerURL.String()+link.EventsPath+string(link.Shard), "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	return resp
}

// TestLinkRecordsWhatItsRemoteReports: a remote's report over the link shows in its Link's
// status.consumers and in its RootShard's status.shards; a replay writes nothing; and no one
// but the server may write status.consumers, not even the cluster's admin.
func TestLinkRecordsWhatItsRemoteReports(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "link-events")
	givenRootShard(t, ns)
	b := givenLink(t, ns, "eu-1", "eu-1.links.example.com")
	client := linkClient(b, bootstrapPair(t, b))
	fp := strings.Repeat("ab", 32)

	require.Equal(t, http.StatusNoContent, report(t, b, client, 1, fp).StatusCode)
	var consumers string
	require.Eventually(t, func() bool {
		consumers = kubectl(t, "get", "link", "eu-1", "-n", ns, "-o", "jsonpath={.status.consumers}")
		return consumers != ""
	}, time.Minute, time.Second)
	var got []map[string]any
	require.NoError(t, json.Unmarshal([]byte(consumers), &got))
	require.Len(t, got, 1)
	assert.Equal(t, "Shard", got[0]["kind"])
	assert.Equal(t, "b", got[0]["namespace"])
	assert.Equal(t, "s-1", got[0]["name"])
	assert.Equal(t, []any{map[string]any{"ca": "server", "trusted": []any{fp}, "served": []any{fp}}}, got[0]["trust"])
	assert.Eventually(t, func() bool {
		return strings.Contains(kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", "jsonpath={.status.shards}"), `"link":"eu-1"`)
	}, time.Minute, time.Second, "the RootShard lists the linked Shard")

	rv := kubectl(t, "get", "link", "eu-1", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}")
	require.Equal(t, http.StatusNoContent, report(t, b, client, 1, strings.Repeat("cd", 32)).StatusCode, "a replay is answered")
	assert.Equal(t, rv, kubectl(t, "get", "link", "eu-1", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}"), "and writes nothing")

	out, err := stack.Kubectl(t.Context(), "patch", "link", "eu-1", "-n", ns, "--subresource=status", "--type=merge",
		"-p", `{"status":{"consumers":null}}`)
	require.Error(t, err, "the admin may not drop what the remote reported: %s", out)
	assert.Contains(t, out, "status.consumers")
	assert.Contains(t, out, "Forbidden")
}
