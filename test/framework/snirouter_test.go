package framework

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

// TestSNIRouter: each connection reaches the server routed for the name it asks for, with TLS
// end to end (the client verifies that server's own certificate); a name without a route is
// closed.
func TestSNIRouter(t *testing.T) {
	dir := t.TempDir()
	ca, err := localstack.LoadOrCreateCA(dir, "ca")
	require.NoError(t, err)
	router, err := StartSNIRouter()
	require.NoError(t, err)
	t.Cleanup(router.Stop)
	for _, name := range []string{"root-kcp.team-a.svc.cluster.local", "root-proxy.team-a.svc.cluster.local"} {
		kp, err := ca.Issue(dir, name, localstack.CertSpec{CommonName: name, DNSNames: []string{name}, Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		require.NoError(t, err)
		pair, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
		require.NoError(t, err)
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(name)) }))
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		router.Route(name, strings.TrimPrefix(srv.URL, "https://"))
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.CertPEM)
	get := func(name string) (string, error) {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: name},
			Dial: func(string, string) (net.Conn, error) { return net.Dial("tcp", router.Addr) }}}
		resp, err := c.Get("https://" + name + ":6443/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	for _, name := range []string{"root-proxy.team-a.svc.cluster.local", "root-kcp.team-a.svc.cluster.local"} {
		got, err := get(name)
		require.NoError(t, err, name)
		assert.Equal(t, name, got)
	}
	_, err = get("shard-1-shard-kcp.team-a.svc.cluster.local")
	assert.Error(t, err, "no route: the connection is closed")
}
