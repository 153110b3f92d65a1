package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFingerprints(t *testing.T) {
	cert := func(cn string) []byte {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0), IsCA: true, BasicConstraintsValid: true}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		require.NoError(t, err)
		return der
	}
	a, b := cert("a"), cert("b")
	sum := func(der []byte) string { s := sha256.Sum256(der); return hex.EncodeToString(s[:]) }
	bundle := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte("x")})...)
	bundle = append(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b})...)
	fps, err := Fingerprints(bundle)
	require.NoError(t, err)
	assert.Equal(t, []string{sum(a), sum(b)}, fps, "each certificate, in order, other blocks skipped")
	_, err = Fingerprints(nil)
	assert.Error(t, err)
	_, err = Fingerprints(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("no DER")}))
	assert.Error(t, err)
}
