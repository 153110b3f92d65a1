package link

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

func pemOf(certs ...*x509.Certificate) []byte {
	var b bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return b.Bytes()
}

// TestReportOf: during a rotation of the server CA a consumer's pods trust both CAs and its
// serving certificate comes from one of them; the report says which, by fingerprint.
func TestReportOf(t *testing.T) {
	oldCA, newCA, stranger := newCA(t, "server-ca"), newCA(t, "server-ca-next"), newCA(t, "other")
	serving, _ := oldCA.issue(t, leaf{dns: []string{"s-1.eu.example.com"}, from: now.Add(-1), to: now.Add(1e12)})
	foreign, _ := stranger.issue(t, leaf{dns: []string{"s-1.eu.example.com"}, from: now.Add(-1), to: now.Add(1e12)})
	ready := []metav1.Condition{
		{Type: operatorv1alpha1.ConditionReferenceValid, Status: metav1.ConditionTrue},
		{Type: operatorv1alpha1.ConditionCertificatesReady, Status: metav1.ConditionTrue},
		{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue},
	}
	r, err := ReportOf(Observed{Conditions: ready, KcpShard: "s-1", BaseURL: "https://s-1.eu.example.com:6443",
		Trust:  map[pki.CA][]byte{pki.ServerCA: pemOf(newCA.cert, oldCA.cert, oldCA.cert)},
		Issued: map[pki.CA][][]byte{pki.ServerCA: {pemOf(serving, oldCA.cert), pemOf(foreign)}}})
	require.NoError(t, err)
	both := []string{pki.Fingerprint(oldCA.cert), pki.Fingerprint(newCA.cert)}
	slices.Sort(both)
	assert.Equal(t, ConsumerReport{Realized: true, Available: true, KcpShard: "s-1", BaseURL: "https://s-1.eu.example.com:6443",
		CAs: map[pki.CA]CATrust{pki.ServerCA: {Trusted: both, Served: []string{pki.Fingerprint(oldCA.cert)}}}}, r,
		"both CAs trusted, once each; served from the old one; a certificate no trusted CA signed is left out")

	notYet := []metav1.Condition{{Type: operatorv1alpha1.ConditionReferenceValid, Status: metav1.ConditionTrue},
		{Type: operatorv1alpha1.ConditionCertificatesReady, Status: metav1.ConditionFalse}}
	r, err = ReportOf(Observed{Conditions: notYet})
	require.NoError(t, err)
	assert.Equal(t, ConsumerReport{}, r, "certificates not ready: not realized, not available")
	r, err = ReportOf(Observed{})
	require.NoError(t, err)
	assert.False(t, r.Realized, "no ReferenceValid yet: not realized")

	_, err = ReportOf(Observed{Trust: map[pki.CA][]byte{pki.ServerCA: pemOf(oldCA.cert)}, Issued: map[pki.CA][][]byte{pki.ServerCA: {[]byte("none")}}})
	assert.Error(t, err, "a certificate that is no PEM")
}

// TestWithout: what a merged client CA bundle trusts of the client CA is the bundle without
// the front-proxy-client CAs the home names; an old client CA the home dropped, still in a
// bundle not refreshed, stays in, so that the consumer is not reported to have dropped it.
func TestWithout(t *testing.T) {
	oldClient, newClient, proxy, proxyNext := newCA(t, "client-ca"), newCA(t, "client-ca-next"), newCA(t, "front-proxy-client-ca"), newCA(t, "fpc-next")
	merged := pemOf(oldClient.cert, newClient.cert, proxy.cert)
	assert.Equal(t, pemOf(oldClient.cert, newClient.cert), Without(merged, pemOf(proxy.cert, proxyNext.cert)))
	assert.Equal(t, pemOf(oldClient.cert, newClient.cert, proxy.cert), Without(merged, pemOf(proxyNext.cert)), "a CA the others do not name stays")
	assert.Equal(t, pemOf(newClient.cert), Without(pemOf(newClient.cert, proxy.cert), pemOf(proxy.cert), []byte("not PEM")))
	assert.Empty(t, Without(pemOf(proxy.cert), pemOf(proxy.cert)))
	assert.Equal(t, merged, Without(merged))
}
