package credentials

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
)

func TestMintChainsToTheCAForClientAuthOnly(t *testing.T) {
	certPEM, keyPEM := credentialstest.NewCA(t, "root-front-proxy-client-ca")
	ca, err := ParseCA(certPEM, keyPEM)
	require.NoError(t, err)
	now := time.Now()
	m, err := ca.Mint(pkix.Name{CommonName: "alice", Organization: []string{"team-a", "team-b"}}, now, time.Hour)
	require.NoError(t, err)

	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	_, err = m.Cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, CurrentTime: now})
	require.NoError(t, err, "the credential chains to the CA as a client certificate")
	_, err = m.Cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, CurrentTime: now})
	assert.Error(t, err, "and cannot serve")
	assert.False(t, m.Cert.IsCA)
	assert.Equal(t, x509.KeyUsageDigitalSignature, m.Cert.KeyUsage)

	assert.Equal(t, "alice", m.Cert.Subject.CommonName)
	assert.Equal(t, []string{"team-a", "team-b"}, m.Cert.Subject.Organization)
	assert.Equal(t, now.Add(-time.Minute).Truncate(time.Second).UTC(), m.Cert.NotBefore.UTC(), "backdated one minute for clock skew")
	assert.Equal(t, now.Add(time.Hour).Truncate(time.Second).UTC(), m.Cert.NotAfter.UTC())

	pub, ok := m.Cert.PublicKey.(*ecdsa.PublicKey)
	require.True(t, ok, "an ECDSA key")
	assert.Equal(t, elliptic.P256(), pub.Curve)
	block, _ := pem.Decode(m.KeyPEM)
	require.NotNil(t, block)
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	require.NoError(t, err)
	assert.True(t, key.(*ecdsa.PrivateKey).PublicKey.Equal(pub), "the key matches the certificate")
	assert.Len(t, m.Fingerprint(), 64)

	other, err := ca.Mint(pkix.Name{CommonName: "alice"}, now, time.Hour)
	require.NoError(t, err)
	assert.NotEqual(t, m.Cert.SerialNumber, other.Cert.SerialNumber, "serial numbers are random")
}

func TestMintNeverOutlivesTheCA(t *testing.T) {
	certPEM, keyPEM := credentialstest.NewCA(t, "ca")
	ca, err := ParseCA(certPEM, keyPEM)
	require.NoError(t, err)
	m, err := ca.Mint(pkix.Name{CommonName: "alice"}, time.Now(), 10*365*24*time.Hour)
	require.NoError(t, err)
	assert.Equal(t, ca.Cert.NotAfter, m.Cert.NotAfter)
}

func TestParseCARejectsWhatCannotSign(t *testing.T) {
	certPEM, keyPEM := credentialstest.NewCA(t, "ca")
	ca, err := ParseCA(certPEM, keyPEM)
	require.NoError(t, err)
	leaf, err := ca.Mint(pkix.Name{CommonName: "alice"}, time.Now(), time.Hour)
	require.NoError(t, err)
	_, err = ParseCA(leaf.CertPEM, leaf.KeyPEM)
	assert.ErrorContains(t, err, "not a CA")
	_, err = ParseCA(nil, keyPEM)
	assert.Error(t, err)
	_, err = ParseCA(certPEM, []byte("garbage"))
	assert.Error(t, err)
}
