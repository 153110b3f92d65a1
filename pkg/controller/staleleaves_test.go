package controller

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testCA is a CA certificate (PEM) and its key, under a name that a renewed CA keeps.
func testCA(t *testing.T, name string) ([]byte, *x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), cert, key
}

func testLeaf(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "root"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// A leaf is stale once its CA's Secret holds another CA of the same name (rotated, or
// issued twice), and only then; what cannot be read is never called stale.
func TestNotSignedBy(t *testing.T) {
	caPEM, ca, caKey := testCA(t, "root-server-ca")
	renewedPEM, _, _ := testCA(t, "root-server-ca")
	leaf := testLeaf(t, ca, caKey)
	// cert-manager's tls.crt holds the leaf, then its chain.
	chain := append(append([]byte{}, leaf...), caPEM...)

	assert.False(t, NotSignedBy(chain, caPEM), "signed by the CA")
	assert.False(t, NotSignedBy(chain, append(append([]byte{}, caPEM...), renewedPEM...)), "the first certificate of the CA's Secret is the CA")
	assert.True(t, NotSignedBy(chain, renewedPEM), "the CA was rotated since")
	assert.True(t, NotSignedBy(chain, append(append([]byte{}, renewedPEM...), caPEM...)), "only the current CA counts")
	assert.False(t, NotSignedBy(nil, renewedPEM), "no leaf yet")
	assert.False(t, NotSignedBy(chain, nil), "no CA yet")
	assert.False(t, NotSignedBy([]byte("not PEM"), renewedPEM))
	assert.False(t, NotSignedBy(chain, []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")))
}
