package remote

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/link/linktest"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
)

// testCA is a CA made in a test, valid from an hour ago to a day from now, with its PEM.
type testCA struct {
	linktest.CA
	pem []byte
}

func newCA(t *testing.T, cn string) testCA {
	ca := linktest.NewCA(t, cn, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
	return testCA{CA: ca, pem: ca.PEM()}
}

// sign signs tmpl for pub and returns the PEM chain cert-manager's CA issuer writes: the
// leaf, then the CA.
func (ca testCA) sign(t *testing.T, tmpl *x509.Certificate, pub crypto.PublicKey) []byte {
	t.Helper()
	return append(linktest.PEM("CERTIFICATE", ca.Sign(t, tmpl, pub)), ca.pem...)
}

// pairOf signs a leaf for a fresh key: the PEM chain and the key.
func (ca testCA) pairOf(t *testing.T, tmpl *x509.Certificate) (certPEM, keyPEM []byte) {
	t.Helper()
	key := linktest.NewKey(t)
	der, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return ca.sign(t, tmpl, key.Public()), linktest.PEM("EC PRIVATE KEY", der)
}

// The Link of the tests: eu-1 of the RootShard a/root, admitting Shards.
var testLink = link.Declaration{Namespace: "a", Name: "eu-1", UID: "uid-eu-1", RootShard: "root", Identity: "eu-1.links.example.com",
	Consumers: []link.ConsumerKind{link.Shard}}

const testServerName = "root.a" + linkpki.ServerNameSuffix

// home is a listener on loopback with real TLS: the real link.Listener.Handler in front of
// the test's handler, the link CA of a/root, its serving certificate for testServerName.
type home struct {
	*httptest.Server
	ca testCA
	// deleting marks the Link as being deleted: the listener refuses it.
	deleting atomic.Bool
	// clientCert and clientKey are eu-1's client pair.
	clientCert, clientKey []byte
}

// newHome starts a home with limits whose routes are handled by next.
func newHome(t *testing.T, limits link.Limits, next http.Handler) *home {
	t.Helper()
	ca := newCA(t, "a-root-link-ca")
	servingCert, servingKey := ca.pairOf(t, &x509.Certificate{Subject: pkix.Name{CommonName: testServerName}, DNSNames: []string{testServerName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	serving, err := tls.X509KeyPair(servingCert, servingKey)
	require.NoError(t, err)
	h := &home{ca: ca}
	h.clientCert, h.clientKey = ca.pairOf(t, clientTemplate(t, time.Now().Add(-time.Hour), time.Now().Add(time.Hour)))

	l := &link.Listener{
		Declarations: func() []link.Declaration {
			d := testLink
			d.Deleting = h.deleting.Load()
			return []link.Declaration{d}
		},
		Trust: func() link.Trust {
			return link.Trust{testLink.Key(): {LinkCAs: []*x509.Certificate{ca.Cert}, ServerName: testServerName}}
		},
		Limiter: link.NewLimiter(limits),
	}
	h.Server = httptest.NewUnstartedServer(l.Handler(next))
	h.TLS = link.TLSConfig(func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if hello.ServerName != testServerName {
			return nil, nil
		}
		return &serving, nil
	})
	h.EnableHTTP2 = true
	h.StartTLS()
	t.Cleanup(h.Close)
	return h
}

// clientTemplate is eu-1's client certificate, as resources/link.ClientLeaf issues it.
func clientTemplate(t *testing.T, from, to time.Time) *x509.Certificate {
	uri, err := url.Parse(testLink.URI())
	require.NoError(t, err)
	return &x509.Certificate{Subject: pkix.Name{CommonName: testLink.Identity}, DNSNames: []string{testLink.Identity}, URIs: []*url.URL{uri},
		NotBefore: from, NotAfter: to, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
}

// bootstrap is the bootstrap Secret of eu-1 for h, as carried to the remote cluster.
func (h *home) bootstrap() *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: linkpki.BootstrapName(testLink.Name), Namespace: "remote", UID: "uid-bootstrap",
		ResourceVersion: "1"},
		Type: linkpki.BootstrapType,
		Data: map[string][]byte{linkpki.ListenerURLKey: []byte(h.URL), linkpki.ServerNameKey: []byte(testServerName),
			linkpki.CACertKey: h.ca.pem, linkpki.ClientCertKey: h.clientCert, linkpki.ClientKeyKey: h.clientKey}}
}

// client is a Client of h's bootstrap Secret, with a short backoff and heartbeat.
func (h *home) client(t *testing.T) *Client {
	t.Helper()
	b, err := linkpki.ResolveBootstrap(h.bootstrap(), time.Now())
	require.NoError(t, err)
	c, err := NewClient(b)
	require.NoError(t, err)
	c.Backoff = wait.Backoff{Duration: 10 * time.Millisecond, Factor: 1, Steps: 1 << 30}
	c.Heartbeat = time.Second
	t.Cleanup(c.Close)
	return c
}

// writeJSON answers v.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// pemBytes is the DER of the one PEM block of data.
func pemBytes(t *testing.T, data []byte) []byte {
	t.Helper()
	block, _ := pem.Decode(data)
	require.NotNil(t, block)
	return block.Bytes
}
