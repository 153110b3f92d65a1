package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/wait"
	certutil "k8s.io/client-go/util/cert"

	"github.com/kcp-setups/apiserver/cmd/apiserver/app"
)

// TestServingCertificateIsReloaded replaces the files of --tls-cert-file and
// --tls-private-key-file while the server runs: new connections get the new certificate.
func TestServingCertificateIsReloaded(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writePair := func() []byte {
		cert, key, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.ParseIP("127.0.0.1")}, nil)
		require.NoError(t, err)
		// Write the key first: the certificate's change is what triggers the reload.
		require.NoError(t, os.WriteFile(keyFile+".tmp", key, 0o600))
		require.NoError(t, os.Rename(keyFile+".tmp", keyFile))
		require.NoError(t, os.WriteFile(certFile+".tmp", cert, 0o600))
		require.NoError(t, os.Rename(certFile+".tmp", certFile))
		return cert
	}
	first := writePair()

	s := startServer(t, embedded(t.TempDir()), func(o *app.Options) {
		o.RecommendedOptions.SecureServing.ServerCert.CertKey.CertFile = certFile
		o.RecommendedOptions.SecureServing.ServerCert.CertKey.KeyFile = keyFile
	})
	defer s.stop()
	host := s.config.Host[len("https://"):]

	served := func(roots ...[]byte) (*x509.Certificate, error) {
		pool := x509.NewCertPool()
		for _, r := range roots {
			pool.AppendCertsFromPEM(r)
		}
		conn, err := tls.Dial("tcp", host, &tls.Config{RootCAs: pool, ServerName: "localhost"})
		if err != nil {
			return nil, err
		}
		defer func() { _ = conn.Close() }()
		return conn.ConnectionState().PeerCertificates[0], nil
	}
	before, err := served(first)
	require.NoError(t, err, "the server presents the first certificate")

	second := writePair()
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		after, err := served(first, second)
		if err != nil {
			return false, nil
		}
		return after.SerialNumber.Cmp(before.SerialNumber) != 0, nil
	})
	require.NoError(t, err, "the server never presented the new certificate")
	_, err = served(second)
	require.NoError(t, err, "the new certificate verifies against its own CA")
}
