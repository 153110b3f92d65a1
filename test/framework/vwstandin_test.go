package framework

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

// TestAVirtualWorkspacePathCarriesTheCallersIdentity runs the front-proxy double in front of
// a virtual workspace stand-in, both from command lines and files as a realized pod has
// them: a path mapped with the request-header identity that the server's request-header CA
// signed brings the caller's user and groups there; a mapping with another identity, or a
// caller who sends the headers herself, is refused by the server.
func TestAVirtualWorkspacePathCarriesTheCallersIdentity(t *testing.T) {
	dir := t.TempDir()
	ca := func(name string) *localstack.CA {
		c, err := localstack.LoadOrCreateCA(dir, name)
		require.NoError(t, err)
		return c
	}
	clientCA, serverCA, requestHeaderCA := ca("client-ca"), ca("server-ca"), ca("requestheader-ca")
	const vwHost = "access-virtual-workspace.team-a.svc.cluster.local"
	serving := func(name, host string) *localstack.KeyPair {
		kp, err := serverCA.Issue(dir, name, localstack.CertSpec{CommonName: name, DNSNames: []string{host}, IPs: []net.IP{net.ParseIP("127.0.0.1")},
			Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		require.NoError(t, err)
		return kp
	}
	client := func(c *localstack.CA, name, user string, groups ...string) *localstack.KeyPair {
		kp, err := c.ClientCert(dir, name, user, groups...)
		require.NoError(t, err)
		return kp
	}

	vwServing := serving("vw", vwHost)
	server, err := StartVirtualWorkspaceStandIn([]string{"--tls-cert-file=/vw/tls/tls.crt", "--tls-private-key-file=/vw/tls/tls.key",
		"--requestheader-client-ca-file=/vw/ca/requestheader-client/tls.crt", "--requestheader-allowed-names=kcp-front-proxy,kcp-root-shard-proxy",
		"--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group"},
		map[string][]byte{"/vw/tls/tls.crt": vwServing.CertPEM, "/vw/tls/tls.key": vwServing.KeyPEM, "/vw/ca/requestheader-client/tls.crt": requestHeaderCA.CertPEM})
	require.NoError(t, err)
	t.Cleanup(server.Stop)

	fpServing := serving("fp", "localhost")
	identity := client(requestHeaderCA, "requestheader", "kcp-front-proxy")
	// The proxy's name, but from the client CA: not an identity the server trusts.
	impostor := client(clientCA, "impostor", "kcp-front-proxy")
	files := map[string][]byte{
		"/fp/tls/tls.crt": fpServing.CertPEM, "/fp/tls/tls.key": fpServing.KeyPEM, "/fp/client-ca/tls.crt": clientCA.CertPEM,
		"/fp/ca/server/tls.crt": serverCA.CertPEM, "/fp/requestheader/tls.crt": identity.CertPEM, "/fp/requestheader/tls.key": identity.KeyPEM,
		"/fp/extra/tls.crt": impostor.CertPEM, "/fp/extra/tls.key": impostor.KeyPEM,
		"/fp/config/path-mapping.yaml": []byte(`- {path: /clusters/, backend: "https://root-kcp:6443", backend_server_ca: /fp/ca/server/tls.crt, proxy_client_cert: /fp/requestheader/tls.crt, proxy_client_key: /fp/requestheader/tls.key}
- {path: /services/access, backend: "https://` + vwHost + `:6443", backend_server_ca: /fp/ca/server/tls.crt, proxy_client_cert: /fp/requestheader/tls.crt, proxy_client_key: /fp/requestheader/tls.key}
- {path: /services/impostor, backend: "https://` + vwHost + `:6443", backend_server_ca: /fp/ca/server/tls.crt, proxy_client_cert: /fp/extra/tls.crt, proxy_client_key: /fp/extra/tls.key}
`),
		"/fp/kubeconfig/kubeconfig": []byte(`apiVersion: v1
kind: Config
clusters: [{name: root, cluster: {server: "https://root-kcp:6443", certificate-authority: /fp/ca/server/tls.crt}}]
users: [{name: proxy, user: {client-certificate: /fp/requestheader/tls.crt, client-key: /fp/requestheader/tls.key}}]
contexts: [{name: root, context: {cluster: root, user: proxy}}]
current-context: root
`),
	}
	dialer := net.Dialer{}
	toServer := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialer.DialContext(ctx, network, server.Addr)
	}
	proxy, err := StartFrontProxyDouble(FrontProxyDoubleOptions{Files: files, Dial: toServer, Args: []string{
		"--tls-cert-file=/fp/tls/tls.crt", "--tls-private-key-file=/fp/tls/tls.key", "--client-ca-file=/fp/client-ca/tls.crt",
		"--mapping-file=/fp/config/path-mapping.yaml", "--root-kubeconfig=/fp/kubeconfig/kubeconfig"}})
	require.NoError(t, err)
	t.Cleanup(proxy.Stop)

	alice := client(clientCA, "alice", "alice", "team-a", "system:masters")
	aliceCert, err := tls.X509KeyPair(alice.CertPEM, alice.KeyPEM)
	require.NoError(t, err)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(serverCA.CertPEM)
	get := func(client *http.Client, url string, header http.Header) (*http.Response, VirtualWorkspaceCaller) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		require.NoError(t, err)
		req.Header = header
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var caller VirtualWorkspaceCaller
		if resp.StatusCode == http.StatusOK {
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&caller))
		}
		return resp, caller
	}
	forged := http.Header{"X-Remote-User": {"admin"}, "X-Remote-Group": {"system:masters"}}
	viaProxy := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost",
		Certificates: []tls.Certificate{aliceCert}, MinVersion: tls.VersionTLS12}}}

	resp, caller := get(viaProxy, proxy.URL+"/services/access/clusters/root/apis", forged)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, VirtualWorkspaceCaller{Path: "/services/access/clusters/root/apis", User: "alice", Groups: []string{"team-a"}}, caller,
		"alice's user and groups, system:masters dropped, her own headers ignored")

	resp, _ = get(viaProxy, proxy.URL+"/services/impostor/x", nil)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "an identity the server's request-header CA did not sign")

	direct := &http.Client{Transport: &http.Transport{DialContext: toServer, TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: vwHost,
		Certificates: []tls.Certificate{aliceCert}, MinVersion: tls.VersionTLS12}}}
	resp, _ = get(direct, "https://"+vwHost+":6443/services/access/x", forged)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "alice asserting an identity herself")
}
