package remote

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
	certbundle "github.com/kcp-setups/apiserver/pkg/resources/certificates"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
)

// rotatingHome is a listener whose link CA rotates, as a RootShard's does: the real
// link.Listener in front of a stream of the Bundles the test sets, and a renew route that
// signs from the CA the test says; the listener trusts the live CAs and serves a certificate
// from the CA the test says.
type rotatingHome struct {
	*httptest.Server
	old, next testCA

	mu sync.Mutex
	// live are the CAs the listener accepts; signer signs renewals; serving is the serving
	// certificate.
	live    []testCA
	signer  testCA
	serving *tls.Certificate
	bundles link.Bundles
	changed chan struct{}
	// streams are the client certificates of each stream opened, by the CA that signed them.
	streams []string
}

func newRotatingHome(t *testing.T) *rotatingHome {
	t.Helper()
	h := &rotatingHome{old: newCA(t, "a-root-link-ca"), next: newCA(t, "a-root-link-ca-next"), changed: make(chan struct{})}
	h.live, h.signer, h.serving = []testCA{h.old}, h.old, h.servingFrom(t, h.old)
	h.bundles = link.Bundles{Revision: "1", LinkCA: h.old.pem, LinkCAIssuer: h.old.pem}
	l := &link.Listener{
		Declarations: func() []link.Declaration { return []link.Declaration{testLink} },
		Trust: func() link.Trust {
			h.mu.Lock()
			defer h.mu.Unlock()
			rt := link.RootShardTrust{ServerName: testServerName}
			for _, ca := range h.live {
				rt.LinkCAs = append(rt.LinkCAs, ca.Cert)
			}
			return link.Trust{testLink.Key(): rt}
		},
		Limiter: link.NewLimiter(link.DefaultLimits),
	}
	h.Server = httptest.NewUnstartedServer(l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case link.BundlesPath:
			h.stream(w, r)
		case link.RenewPath:
			var req link.SignRequest
			require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
			csr, err := x509.ParseCertificateRequest(pemBytes(t, req.Request))
			require.NoError(t, err)
			require.NoError(t, link.CheckRenewal(csr, testLink))
			h.mu.Lock()
			signer := h.signer
			h.mu.Unlock()
			writeJSON(w, link.SignResponse{Certificate: signer.sign(t, clientTemplate(t, time.Now().Add(-time.Minute), time.Now().Add(2*time.Hour)), csr.PublicKey),
				CA: signer.pem})
		default:
			http.NotFound(w, r)
		}
	})))
	h.TLS = link.TLSConfig(func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.serving, nil
	})
	h.EnableHTTP2 = true
	h.StartTLS()
	t.Cleanup(h.Close)
	return h
}

// servingFrom is a serving certificate for testServerName from ca.
func (h *rotatingHome) servingFrom(t *testing.T, ca testCA) *tls.Certificate {
	cert, key := ca.pairOf(t, &x509.Certificate{Subject: pkix.Name{CommonName: testServerName}, DNSNames: []string{testServerName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	pair, err := tls.X509KeyPair(cert, key)
	require.NoError(t, err)
	return &pair
}

// stream sends the current Bundles, and the new ones as the test sets them.
func (h *rotatingHome) stream(w http.ResponseWriter, r *http.Request) {
	leaf := r.TLS.PeerCertificates[0]
	h.mu.Lock()
	by := "another"
	for _, ca := range []testCA{h.old, h.next} {
		if leaf.CheckSignatureFrom(ca.Cert) == nil {
			by = ca.Cert.Subject.CommonName
		}
	}
	h.streams = append(h.streams, by)
	h.mu.Unlock()
	for {
		h.mu.Lock()
		b, changed := h.bundles, h.changed
		h.mu.Unlock()
		send(w, link.StreamMessage{Type: link.BundlesMessage, Bundles: &b})
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		}
	}
}

// step sets the home's state: the live CAs, the CA it signs from and serves from, and the
// Bundles that say so, which the open streams send.
func (h *rotatingHome) step(t *testing.T, revision string, live []testCA, signer testCA) {
	serving := h.servingFrom(t, signer)
	var bundle [][]byte
	for _, ca := range live {
		bundle = append(bundle, ca.pem)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.live, h.signer, h.serving = live, signer, serving
	h.bundles = link.Bundles{Revision: revision, LinkCA: certbundle.Bundle(bundle...), LinkCAIssuer: signer.pem}
	close(h.changed)
	h.changed = make(chan struct{})
}

// streamed reports whether a stream was opened with a client certificate from ca.
func (h *rotatingHome) streamed(ca testCA) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, by := range h.streams {
		if by == ca.Cert.Subject.CommonName {
			return true
		}
	}
	return false
}

// bootstrap is eu-1's bootstrap Secret as carried before the rotation: ca.crt the old CA,
// a client certificate from it.
func (h *rotatingHome) bootstrap(t *testing.T) *corev1.Secret {
	cert, key := h.old.pairOf(t, clientTemplate(t, time.Now().Add(-time.Hour), time.Now().Add(time.Hour)))
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: linkpki.BootstrapName(testLink.Name), Namespace: "remote", UID: "uid-bootstrap",
		ResourceVersion: "1"},
		Type: linkpki.BootstrapType,
		Data: map[string][]byte{linkpki.ListenerURLKey: []byte(h.URL), linkpki.ServerNameKey: []byte(testServerName),
			linkpki.CACertKey: h.old.pem, linkpki.ClientCertKey: cert, linkpki.ClientKeyKey: key}}
}

// linkReport is what a consumer of the link reports of the CA link (link.ReportOf of what
// Manager.LinkTrust says): the fingerprints of the CAs it trusts and of the one its client
// certificate comes from.
func linkReport(c *assert.CollectT, m *Manager, h *rotatingHome) (trusted, served []string) {
	trust, client, ok := m.LinkTrust(h.key())
	if !assert.True(c, ok, "the link has a session") {
		return nil, nil
	}
	r, err := link.ReportOf(link.Observed{Trust: map[pki.CA][]byte{pki.LinkCA: trust}, Issued: map[pki.CA][][]byte{pki.LinkCA: {client}}})
	if !assert.NoError(c, err) {
		return nil, nil
	}
	return r.CAs[pki.LinkCA].Trusted, r.CAs[pki.LinkCA].Served
}

// key is the bootstrap Secret's.
func (h *rotatingHome) key() types.NamespacedName {
	return types.NamespacedName{Namespace: "remote", Name: linkpki.BootstrapName(testLink.Name)}
}

// clientFrom reports whether the bootstrap Secret's client certificate comes from ca.
func clientFrom(c *assert.CollectT, kube *fake.Clientset, ca testCA) bool {
	s, err := kube.CoreV1().Secrets("remote").Get(context.Background(), linkpki.BootstrapName(testLink.Name), metav1.GetOptions{})
	if !assert.NoError(c, err) {
		return false
	}
	block, _ := pem.Decode(s.Data[linkpki.ClientCertKey])
	if block == nil {
		return false
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	return err == nil && leaf.CheckSignatureFrom(ca.Cert) == nil
}

// TestLinkFollowsARotationOfTheLinkCA plays a rotation of the link CA against a remote whose
// bootstrap Secret was carried once, before it: at Start the link trusts both CAs (what it
// reports); once the home signs and serves from the new CA, the remote renews its client
// certificate from it at once, not at two thirds of its life, and connects to the listener
// that serves from the new CA; once the old CA is dropped, it trusts the new one alone.
func TestLinkFollowsARotationOfTheLinkCA(t *testing.T) {
	h := newRotatingHome(t)
	bootstrap := h.bootstrap(t)
	kube := fake.NewClientset(bootstrap)
	m := manage(t, kube, h.key())
	oldFP, nextFP := pki.Fingerprint(h.old.Cert), pki.Fingerprint(h.next.Cert)
	waitState(t, m, h.key(), func(c *assert.CollectT, st State) { assert.True(c, st.Connected) })
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		trusted, served := linkReport(c, m, h)
		assert.Equal(c, []string{oldFP}, trusted)
		assert.Equal(c, []string{oldFP}, served)
	}, 10*time.Second, 10*time.Millisecond)

	// Start: the new CA is live; the home still signs and serves from the old one.
	h.step(t, "2", []testCA{h.old, h.next}, h.old)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		trusted, served := linkReport(c, m, h)
		assert.ElementsMatch(c, []string{oldFP, nextFP}, trusted, "the link trusts both link CAs")
		assert.Equal(c, []string{oldFP}, served)
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, bootstrap.Data[linkpki.ClientCertKey], secretData(t, kube, linkpki.ClientCertKey), "nothing to renew yet")

	// The leaves switch: the home signs and serves from the new CA.
	h.step(t, "3", []testCA{h.old, h.next}, h.next)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.True(c, clientFrom(c, kube, h.next), "the client certificate is renewed from the new link CA at once")
		assert.True(c, h.streamed(h.next), "a stream opened with it, to the listener serving from the new link CA")
		trusted, served := linkReport(c, m, h)
		assert.ElementsMatch(c, []string{oldFP, nextFP}, trusted)
		assert.Equal(c, []string{nextFP}, served, "the link reports its client certificate from the new link CA")
	}, 10*time.Second, 10*time.Millisecond)

	// Complete drops the old CA.
	h.step(t, "4", []testCA{h.next}, h.next)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		trusted, served := linkReport(c, m, h)
		assert.Equal(c, []string{nextFP}, trusted, "the link trusts the new link CA alone")
		assert.Equal(c, []string{nextFP}, served)
	}, 10*time.Second, 10*time.Millisecond)
	waitState(t, m, h.key(), func(c *assert.CollectT, st State) {
		assert.True(c, st.Connected)
		assert.Equal(c, "4", st.Revision)
	})
	assert.Equal(t, h.old.pem, secretData(t, kube, linkpki.CACertKey), "the bootstrap Secret's ca.crt is as carried")
}

// TestLinkRestartedWhileTheLinkCARotates: a remote server that starts again after the home
// switched to the new link CA, from a bootstrap Secret carried before the rotation, trusts
// the listener by the bundles Secret it wrote before (both link CAs), connects, and renews
// its client certificate from the new CA.
func TestLinkRestartedWhileTheLinkCARotates(t *testing.T) {
	h := newRotatingHome(t)
	bootstrap := h.bootstrap(t)
	h.step(t, "3", []testCA{h.old, h.next}, h.next)
	written := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: linkpki.BundlesName(bootstrap.Name), Namespace: "remote",
		Annotations:     map[string]string{linkpki.RevisionAnnotation: "2"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: bootstrap.Name, UID: bootstrap.UID}}},
		Type: linkpki.BundlesType, Data: map[string][]byte{linkpki.BundlesLinkCAKey: certbundle.Bundle(h.old.pem, h.next.pem)}}
	kube := fake.NewClientset([]runtime.Object{bootstrap, written}...)
	m := manage(t, kube, h.key())
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.True(c, h.streamed(h.old), "connected to the listener serving from the new link CA")
		assert.True(c, clientFrom(c, kube, h.next), "renewed from the new link CA")
		assert.True(c, h.streamed(h.next))
	}, 10*time.Second, 10*time.Millisecond)
	waitState(t, m, h.key(), func(c *assert.CollectT, st State) { assert.True(c, st.Connected) })
}

// secretData is the key k of the bootstrap Secret in kube.
func secretData(t *testing.T, kube *fake.Clientset, k string) []byte {
	t.Helper()
	s, err := kube.CoreV1().Secrets("remote").Get(context.Background(), linkpki.BootstrapName(testLink.Name), metav1.GetOptions{})
	require.NoError(t, err)
	return s.Data[k]
}
