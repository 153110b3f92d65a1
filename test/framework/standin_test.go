package framework

import (
	"crypto/x509"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

// A stand-in whose serving certificate its server CA does not verify fails at once, and the
// error tells the signer apart from the CA in the bundle, although both have the same name.
func TestVerifyServing(t *testing.T) {
	dir := t.TempDir()
	signer, err := localstack.LoadOrCreateCA(dir, "server-ca")
	require.NoError(t, err)
	renewed, err := localstack.LoadOrCreateCA(t.TempDir(), "server-ca")
	require.NoError(t, err)
	leaf, err := signer.Issue(dir, "server", localstack.CertSpec{CommonName: "root-server", DNSNames: []string{"localhost"},
		Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	require.NoError(t, err)

	assert.NoError(t, verifyServing(leaf.CertPEM, signer.CertPEM, "localhost"))

	err = verifyServing(leaf.CertPEM, renewed.CertPEM, "localhost")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "certificate signed by unknown authority")
	assert.Contains(t, err.Error(), `CN "root-server"`)
	assert.Contains(t, err.Error(), "issued by CN \"server-ca\"")
	assert.Contains(t, err.Error(), "server CA bundle:")
	assert.NotEqual(t, signer.Cert.SubjectKeyId, renewed.Cert.SubjectKeyId, "the two CAs have keys of their own")

	err = verifyServing(leaf.CertPEM, signer.CertPEM, "elsewhere")
	require.Error(t, err, "a name the certificate does not hold")
	assert.Contains(t, err.Error(), "elsewhere")

	assert.ErrorContains(t, verifyServing(nil, signer.CertPEM, "localhost"), "the serving certificate")
	assert.ErrorContains(t, verifyServing(leaf.CertPEM, []byte("not PEM"), "localhost"), "the server CA bundle")
}
