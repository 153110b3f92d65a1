package framework

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

func TestBackendPath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		found    bool
	}{
		{"/clusters/root/api/v1/namespaces", "/api/v1/namespaces", true},
		{"/clusters/root:team-a/apis/core.kcp.io/v1alpha1/shards", "/apis/core.kcp.io/v1alpha1/shards", true},
		{"/clusters/root", "/", true},
		{"/clusters/root/", "/", true},
		{"/clusters/*/api", "/api", true},
		{"/clusters/root/api/v1/namespaces/a%2Fb", "/api/v1/namespaces/a%2Fb", true},
		{"/readyz", "/readyz", true},
		{"/api/v1/namespaces", "/api/v1/namespaces", true},
		{"/clustersfoo/root/api", "/clustersfoo/root/api", true},
		{"/clusters/", "", false},
		{"/clusters//api", "", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, found := backendPath(tc.in)
			assert.Equal(t, tc.found, found)
			assert.Equal(t, tc.want, got)
		})
	}
}

// seen is what the backend received of one request.
type seen struct {
	path, rawPath, query string
	header               http.Header
	// clientCN is the CN of the client certificate the proxy presented, if any.
	clientCN string
}

// TestWorkspaceProxy runs the proxy between a client and a recording TLS backend: the
// identity the backend sees is the verified certificate's, whatever headers the client
// sends; an anonymous request reaches it without the proxy's certificate; a stranger's
// certificate never reaches it.
func TestWorkspaceProxy(t *testing.T) {
	dir := t.TempDir()
	ca := func(name string) *localstack.CA {
		c, err := localstack.LoadOrCreateCA(dir, name)
		require.NoError(t, err)
		return c
	}
	clientCA, strangerCA, backendCA, requestHeaderCA := ca("client-ca"), ca("stranger-ca"), ca("backend-ca"), ca("requestheader-ca")
	serving := func(c *localstack.CA, name string) tls.Certificate {
		kp, err := c.Issue(dir, name, localstack.CertSpec{CommonName: name, DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP("127.0.0.1")},
			Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		require.NoError(t, err)
		pair, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
		require.NoError(t, err)
		return pair
	}
	client := func(c *localstack.CA, name, user string, groups ...string) *localstack.KeyPair {
		kp, err := c.ClientCert(dir, name, user, groups...)
		require.NoError(t, err)
		return kp
	}

	got := make(chan seen, 1)
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{path: r.URL.Path, rawPath: r.URL.RawPath, query: r.URL.RawQuery, header: r.Header.Clone()}
		if len(r.TLS.PeerCertificates) > 0 {
			s.clientCN = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		got <- s
	}))
	backend.TLS = &tls.Config{Certificates: []tls.Certificate{serving(backendCA, "backend")}, ClientAuth: tls.RequestClientCert}
	backend.StartTLS()
	t.Cleanup(backend.Close)
	backendURL, err := url.Parse(backend.URL)
	require.NoError(t, err)
	proxyCert := client(requestHeaderCA, "front-proxy-client", "kcp-front-proxy")
	proxy, err := newWorkspaceProxy(workspaceProxyConfig{clientCA: clientCA.CertPEM, backend: backendURL,
		backendCA: backendCA.CertPEM, proxyCert: proxyCert.CertPEM, proxyKey: proxyCert.KeyPEM})
	require.NoError(t, err)
	front := httptest.NewUnstartedServer(proxy)
	front.TLS = &tls.Config{Certificates: []tls.Certificate{serving(clientCA, "front")}, ClientAuth: tls.RequestClientCert}
	front.StartTLS()
	t.Cleanup(front.Close)

	alice := client(clientCA, "alice", "alice", "team-a", "team-b")
	rootShardProxy := client(requestHeaderCA, "root-shard-proxy", "kcp-root-shard-proxy")
	otherProxy := client(requestHeaderCA, "other-proxy", "mallory")
	stranger := client(strangerCA, "stranger", "admin", "system:masters")
	forged := http.Header{
		"X-Remote-User": {"admin"}, "X-Remote-Group": {"system:masters"},
		"X-Remote-Extra-Scopes": {"cluster:root"}, "Authorization": {"Bearer stolen"}, "Impersonate-User": {"bob"},
	}
	for _, tc := range []struct {
		name     string
		cert     *localstack.KeyPair
		path     string
		wantCode int
		// want is what the backend sees; nil when the request must not reach it.
		want *seen
		// shard makes the double a shard that hosts root only and trusts the root shard
		// proxy's request-header certificate (HostOnly, AcceptProxy), from this case on.
		shard bool
		// body is in the answer, when set.
		body string
	}{
		{name: "a workspace's path is cut, the identity is the certificate's", cert: alice,
			path: "/clusters/root:team-a/api/v1/namespaces?limit=1", wantCode: http.StatusOK,
			want: &seen{path: "/api/v1/namespaces", query: "limit=1", clientCN: "kcp-front-proxy",
				header: http.Header{"X-Remote-User": {"alice"}, "X-Remote-Group": {"team-a", "team-b"}, "Impersonate-User": {"bob"}}}},
		{name: "an escaped name stays escaped", cert: alice,
			path: "/clusters/root/api/v1/namespaces/a%2Fb", wantCode: http.StatusOK,
			want: &seen{path: "/api/v1/namespaces/a/b", rawPath: "/api/v1/namespaces/a%2Fb", clientCN: "kcp-front-proxy",
				header: http.Header{"X-Remote-User": {"alice"}, "X-Remote-Group": {"team-a", "team-b"}, "Impersonate-User": {"bob"}}}},
		{name: "without a certificate the request is anonymous, with no identity at all",
			path: "/readyz", wantCode: http.StatusOK,
			want: &seen{path: "/readyz", header: http.Header{"Impersonate-User": {"bob"}}}},
		{name: "a stranger's certificate is refused", cert: stranger,
			path: "/clusters/root/api/v1/namespaces", wantCode: http.StatusUnauthorized},
		{name: "a /clusters path without a workspace is not found", cert: alice,
			path: "/clusters//api", wantCode: http.StatusNotFound},
		{name: "a trusted front proxy's request-header certificate asserts the identity in its headers", cert: rootShardProxy, shard: true,
			path: "/clusters/root/api", wantCode: http.StatusOK,
			want: &seen{path: "/api", clientCN: "kcp-front-proxy",
				header: http.Header{"X-Remote-User": {"admin"}, "X-Remote-Group": {"system:masters"}, "Impersonate-User": {"bob"}}}},
		{name: "a request-header certificate of a name not allowed is no client certificate either", cert: otherProxy, shard: true,
			path: "/clusters/root/api", wantCode: http.StatusUnauthorized},
		{name: "a client certificate still works on a shard", cert: alice, shard: true,
			path: "/clusters/root/api", wantCode: http.StatusOK,
			want: &seen{path: "/api", clientCN: "kcp-front-proxy",
				header: http.Header{"X-Remote-User": {"alice"}, "X-Remote-Group": {"team-a", "team-b"}, "Impersonate-User": {"bob"}}}},
		{name: "a workspace of another shard is refused as kcp refuses it", cert: alice, shard: true,
			path: "/clusters/root:team-b/api", wantCode: http.StatusTooManyRequests, body: "Not found on this shard"},
		{name: "even to a trusted front proxy", cert: rootShardProxy, shard: true,
			path: "/clusters/root:team-b/api", wantCode: http.StatusTooManyRequests, body: "Not found on this shard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.shard {
				proxy.hostOnly([]string{"root"})
				require.NoError(t, proxy.acceptProxy(requestHeaderCA.CertPEM, []string{"kcp-front-proxy", "kcp-root-shard-proxy"}))
			}
			roots := x509.NewCertPool()
			roots.AppendCertsFromPEM(clientCA.CertPEM)
			cfg := &tls.Config{RootCAs: roots, ServerName: "localhost"}
			if tc.cert != nil {
				pair, err := tls.X509KeyPair(tc.cert.CertPEM, tc.cert.KeyPEM)
				require.NoError(t, err)
				cfg.Certificates = []tls.Certificate{pair}
			}
			c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, front.URL+tc.path, nil)
			require.NoError(t, err)
			req.Header = forged.Clone()
			resp, err := c.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			_ = resp.Body.Close()
			assert.Equal(t, tc.wantCode, resp.StatusCode)
			assert.Contains(t, string(body), tc.body)
			if tc.want == nil {
				assert.Empty(t, got, "the request reached the backend")
				return
			}
			s := <-got
			assert.Equal(t, tc.want.path, s.path)
			assert.Equal(t, tc.want.rawPath, s.rawPath)
			assert.Equal(t, tc.want.query, s.query)
			assert.Equal(t, tc.want.clientCN, s.clientCN, "the certificate the proxy presents")
			for _, h := range []string{"X-Remote-User", "X-Remote-Group", "X-Remote-Extra-Scopes", "Authorization", "Impersonate-User"} {
				assert.Equal(t, tc.want.header.Values(h), s.header.Values(h), h)
			}
		})
	}
}
