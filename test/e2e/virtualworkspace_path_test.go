package e2e

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/kcp-setups/apiserver/test/framework"
)

// mappingEntry is an entry of a front proxy's path-mapping.yaml.
type mappingEntry struct {
	Path            string `json:"path"`
	Backend         string `json:"backend"`
	BackendServerCA string `json:"backend_server_ca"`
	ProxyClientCert string `json:"proxy_client_cert"`
	ProxyClientKey  string `json:"proxy_client_key"`
}

// frontProxyMapping is the realized mapping file of the ConfigMap configMap, by path.
func frontProxyMapping(t *testing.T, ns, configMap string) map[string]mappingEntry {
	t.Helper()
	var entries []mappingEntry
	require.NoError(t, yaml.Unmarshal([]byte(kubectl(t, "get", "configmap", configMap, "-n", ns, "-o", "jsonpath={.data.path-mapping\\.yaml}")), &entries))
	byPath := map[string]mappingEntry{}
	for _, e := range entries {
		byPath[e.Path] = e
	}
	return byPath
}

// identityFiles are the CA and identity a mapping sends with.
func identityFiles(e mappingEntry) []string {
	return []string{e.BackendServerCA, e.ProxyClientCert, e.ProxyClientKey}
}

// virtualWorkspaceOf is a VirtualWorkspace name of kcp's own server for the RootShard
// rootShard.
func virtualWorkspaceOf(name, rootShard string) string {
	return `apiVersion: operator.kcp.io/v1alpha1
kind: VirtualWorkspace
metadata:
  name: ` + name + `
spec:
  target: {rootShardRef: {name: ` + rootShard + `}}
  external: {hostname: ` + name + `.vw.example.com}
`
}

// TestVirtualWorkspaceBehindAFrontProxyPath: a FrontProxy routes /services/access to the
// VirtualWorkspace access of its RootShard (kcp-operator's samples of custom servers), with
// the CA and request-header identity of its built-in /services/ mapping. While the
// VirtualWorkspace is missing or serves another RootShard, the path is left out and
// ReferenceValid says why; once it is there, the path goes to its Service, and a caller's
// request through the front proxy (the front-proxy double, run from the realized Deployment)
// arrives at the VirtualWorkspace (a stand-in run from its realized Deployment) with the
// caller's identity, which the server believes from the proxy's certificate alone. A plain
// mapping that names the proxy's identity files toward any backend is still a 422.
func TestVirtualWorkspaceBehindAFrontProxyPath(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "vw-path")
	givenRootShard(t, ns, until())
	givenFrontProxy(t, ns, until(), withSpec(`  additionalPathMappings:
    - path: /services/access
      virtualWorkspaceRef: {name: access}
`))
	waitForReason(t, ns, "frontproxy/edge", "ReferenceValid", "False", "VirtualWorkspaceNotFound")
	assert.Contains(t, kubectl(t, "get", "frontproxy", "edge", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="ReferenceValid")].message}`),
		`path /services/access: VirtualWorkspace "access" does not exist`)
	assert.NotContains(t, frontProxyMapping(t, ns, "edge-config"), "/services/access", "no path to a server that is not there")

	// Once it is there and serves the FrontProxy's RootShard, the path goes to its Service,
	// with the built-in /services/ mapping's CA and request-header identity.
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, virtualWorkspaceOf("access", "root")))
	waitFor(t, ns, "frontproxy/edge", "ReferenceValid")
	mapping := frontProxyMapping(t, ns, "edge-config")
	access := mapping["/services/access"]
	assert.Equal(t, "https://access-virtual-workspace."+ns+".svc.cluster.local:6443", access.Backend)
	assert.Equal(t, identityFiles(mapping["/services/"]), identityFiles(access))
	assert.Equal(t, "/etc/kcp-front-proxy/requestheader/tls.crt", access.ProxyClientCert, "the request-header identity, not the system:masters client")

	// A VirtualWorkspace of another RootShard does not get the identity; the other path stays.
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, virtualWorkspaceOf("elsewhere", "other")))
	kubectl(t, "patch", "frontproxy", "edge", "-n", ns, "--type=merge", "-p", `{"spec":{"additionalPathMappings":[`+
		`{"path":"/services/access","virtualWorkspaceRef":{"name":"access"}},{"path":"/services/elsewhere","virtualWorkspaceRef":{"name":"elsewhere"}}]}}`)
	waitForReason(t, ns, "frontproxy/edge", "ReferenceValid", "False", "VirtualWorkspaceTargetMismatch")
	mapping = frontProxyMapping(t, ns, "edge-config")
	assert.NotContains(t, mapping, "/services/elsewhere")
	assert.Equal(t, access, mapping["/services/access"])

	// The identity is the proxy's alone: a plain mapping naming its files is refused, to the
	// VirtualWorkspace's Service as to any other backend, and so is a mapping that names both.
	for _, backend := range []string{"https://access-virtual-workspace:6443", "https://elsewhere:6443"} {
		out, err := stack.Kubectl(t.Context(), "patch", "-v=6", "frontproxy", "edge", "-n", ns, "--type=merge", "-p",
			`{"spec":{"additionalPathMappings":[{"path":"/services/x","backend":"`+backend+`",`+
				`"proxy_client_cert":"/etc/kcp-front-proxy/requestheader/tls.crt","proxy_client_key":"/etc/kcp-front-proxy/requestheader/tls.key"}]}}`)
		require.Error(t, err, "a plain mapping to %s with the proxy's identity files: %s", backend, out)
		assert.Contains(t, out, "422 Unprocessable Entity")
		assert.Contains(t, out, "spec.additionalPathMappings[0].proxy_client_cert: Forbidden: must be a file in a volume of spec.extraVolumes")
		assert.Contains(t, out, "spec.additionalPathMappings[0].proxy_client_key: Forbidden")
	}
	out, err := stack.Kubectl(t.Context(), "patch", "frontproxy", "edge", "-n", ns, "--type=merge", "-p",
		`{"spec":{"additionalPathMappings":[{"path":"/services/access","virtualWorkspaceRef":{"name":"access"},"backend":"https://elsewhere:6443"}]}}`)
	require.Error(t, err)
	assert.Contains(t, out, "spec.additionalPathMappings[0].backend: Forbidden: must be empty with virtualWorkspaceRef")

	// A caller through the front proxy arrives at the VirtualWorkspace as herself.
	waitFor(t, ns, "virtualworkspace/access", "Available")
	waitFor(t, ns, "frontproxy/edge", "Available")
	vwArgs, vwFiles, err := stack.PodFiles(t.Context(), ns, "access-virtual-workspace")
	require.NoError(t, err)
	server, err := framework.StartVirtualWorkspaceStandIn(vwArgs, vwFiles)
	require.NoError(t, err)
	t.Cleanup(server.Stop)
	fpArgs, fpFiles, err := stack.PodFiles(t.Context(), ns, "edge-front-proxy")
	require.NoError(t, err)
	dialer := net.Dialer{Timeout: 10 * time.Second}
	proxy, err := framework.StartFrontProxyDouble(framework.FrontProxyDoubleOptions{Args: fpArgs, Files: fpFiles,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, server.Addr)
		}})
	require.NoError(t, err)
	t.Cleanup(proxy.Stop)

	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, `apiVersion: operator.kcp.io/v1alpha1
kind: Kubeconfig
metadata:
  name: alice
spec:
  username: alice
  groups: [team-a]
  validity: 24h
  secretRef: {name: alice-kubeconfig}
  target: {frontProxyRef: {name: edge}}
`))
	waitFor(t, ns, "kubeconfig/alice", "Available")
	alice, err := clientcmd.RESTConfigFromKubeConfig([]byte(decodeSecretKubeconfig(t, ns, "alice-kubeconfig")))
	require.NoError(t, err)
	alice.Host, alice.TLSClientConfig.ServerName = proxy.URL, "edge.example.com"
	client, err := rest.HTTPClientFor(alice)
	require.NoError(t, err)
	resp, err := client.Get(proxy.URL + "/services/access/clusters/root/apis")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var caller framework.VirtualWorkspaceCaller
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&caller))
	assert.Equal(t, framework.VirtualWorkspaceCaller{Path: "/services/access/clusters/root/apis", User: "alice", Groups: []string{"team-a"}}, caller,
		"the caller's user and groups, as the proxy asserted them with its request-header identity")

	// The server believes those headers from the proxy's identity only: alice, calling it
	// directly with headers of her own, is not a trusted proxy.
	tlsConfig, err := rest.TLSConfigFor(alice)
	require.NoError(t, err)
	tlsConfig.ServerName = "access-virtual-workspace." + ns + ".svc.cluster.local"
	tlsConfig.RootCAs = x509.NewCertPool()
	require.True(t, tlsConfig.RootCAs.AppendCertsFromPEM(decodeSecret(t, ns, "root-server-ca", "tls.crt")))
	direct := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, server.Addr)
		}}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+tlsConfig.ServerName+":6443/services/access/clusters/root/apis", nil)
	require.NoError(t, err)
	req.Header.Set("X-Remote-User", "admin")
	resp, err = direct.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a client certificate of the client CA asserts no identity")
}
