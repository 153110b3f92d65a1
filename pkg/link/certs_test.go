package link

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// now is the tests' clock.
var now = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

// testCA is a CA made in a test.
type testCA struct {
	cert *x509.Certificate
	key  crypto.Signer
}

var serial int64

func nextSerial() *big.Int { serial++; return big.NewInt(serial) }

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return k
}

// newCA makes a self-signed CA valid a year around now.
func newCA(t *testing.T, cn string) testCA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-365 * 24 * time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return testCA{cert: cert, key: key}
}

// leaf is a certificate to issue.
type leaf struct {
	dns      []string
	uris     []string
	from, to time.Time
	usages   []x509.ExtKeyUsage
}

// client is a link client certificate for identity and the URI SAN uri, valid a day around
// now.
func client(identity, uri string) leaf {
	l := leaf{dns: []string{identity}, from: now.Add(-24 * time.Hour), to: now.Add(24 * time.Hour),
		usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if uri != "" {
		l.uris = []string{uri}
	}
	return l
}

// issue signs l with ca and returns the certificate and its key.
func (ca testCA) issue(t *testing.T, l leaf) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: "link"},
		NotBefore: l.from, NotAfter: l.to, DNSNames: l.dns, ExtKeyUsage: l.usages, KeyUsage: x509.KeyUsageDigitalSignature}
	for _, u := range l.uris {
		parsed, err := url.Parse(u)
		require.NoError(t, err)
		tmpl.URIs = append(tmpl.URIs, parsed)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return cert, key
}
