// Package linktest makes the keys, CAs, certificates and CSRs the tests of the link's
// packages (pkg/link, pkg/link/home, pkg/link/remote) sign and present: P-256 keys, a
// self-signed CA, leaves it signs, and CSRs. It imports none of them.
package linktest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var serial atomic.Int64

// NextSerial is a serial number no other certificate of the test binary has.
func NextSerial() *big.Int { return big.NewInt(serial.Add(1)) }

// NewKey is a new P-256 key.
func NewKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return k
}

// CA is a self-signed CA made in a test.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// NewCA is a self-signed CA of the common name cn, valid from from to to.
func NewCA(t testing.TB, cn string, from, to time.Time) CA {
	t.Helper()
	key := NewKey(t)
	tmpl := &x509.Certificate{SerialNumber: NextSerial(), Subject: pkix.Name{CommonName: cn}, NotBefore: from, NotAfter: to,
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return CA{Cert: cert, Key: key}
}

// PEM is the CA's certificate in PEM.
func (ca CA) PEM() []byte { return PEM("CERTIFICATE", ca.Cert.Raw) }

// Sign signs tmpl, with a new serial number, for pub, and returns the DER.
func (ca CA) Sign(t testing.TB, tmpl *x509.Certificate, pub crypto.PublicKey) []byte {
	t.Helper()
	tmpl.SerialNumber = NextSerial()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, pub, ca.Key)
	require.NoError(t, err)
	return der
}

// Issue signs tmpl for a new key, and returns the certificate and its key.
func (ca CA) Issue(t testing.TB, tmpl *x509.Certificate) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key := NewKey(t)
	cert, err := x509.ParseCertificate(ca.Sign(t, tmpl, key.Public()))
	require.NoError(t, err)
	return cert, key
}

// PEM is der as the one PEM block of type typ.
func PEM(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// URIs are uris, parsed.
func URIs(t testing.TB, uris ...string) []*url.URL {
	t.Helper()
	var out []*url.URL
	for _, u := range uris {
		parsed, err := url.Parse(u)
		require.NoError(t, err)
		out = append(out, parsed)
	}
	return out
}

// CSR is the PEM CSR of tmpl, signed with key (a new one when nil).
func CSR(t testing.TB, tmpl *x509.CertificateRequest, key crypto.Signer) []byte {
	t.Helper()
	if key == nil {
		key = NewKey(t)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	require.NoError(t, err)
	return PEM("CERTIFICATE REQUEST", der)
}
