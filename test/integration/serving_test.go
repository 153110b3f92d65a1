package integration

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

// TestServing checks the server's own endpoints and content negotiation.
func TestServing(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	client, err := rest.HTTPClientFor(s.config)
	require.NoError(t, err)
	get := func(t *testing.T, path, accept string) (int, string, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.config.Host+path, nil)
		require.NoError(t, err)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
	}

	t.Run("health and metrics", func(t *testing.T) {
		for _, p := range []string{"/healthz", "/livez", "/readyz", "/readyz/etcd"} {
			code, _, body := get(t, p, "")
			assert.Equal(t, http.StatusOK, code, "%s: %s", p, body)
		}
		code, _, body := get(t, "/metrics", "")
		require.Equal(t, http.StatusOK, code)
		assert.Contains(t, body, "apiserver_request_total")
		assert.Contains(t, body, `group="operator.kcp.io"`)
	})

	const list = "/apis/operator.kcp.io/v1alpha1/namespaces/" + namespace + "/rootshards"
	t.Run("a client that prefers protobuf and accepts JSON gets protobuf", func(t *testing.T) {
		code, ct, body := get(t, list, "application/vnd.kubernetes.protobuf, application/json")
		assert.Equal(t, http.StatusOK, code)
		assert.Equal(t, "application/vnd.kubernetes.protobuf", ct)
		assert.True(t, strings.HasPrefix(body, "k8s\x00"), "a protobuf body: %q", body)
	})
	t.Run("a client that prefers JSON gets JSON", func(t *testing.T) {
		code, ct, _ := get(t, list, "application/json, application/vnd.kubernetes.protobuf")
		assert.Equal(t, http.StatusOK, code)
		assert.Equal(t, "application/json", ct)
	})
	t.Run("discovery is served in protobuf, as client-go asks for it", func(t *testing.T) {
		code, ct, body := get(t, "/apis", "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json")
		assert.Equal(t, http.StatusOK, code)
		assert.Contains(t, ct, "application/vnd.kubernetes.protobuf")
		assert.Contains(t, body, "operator.kcp.io")
	})
	t.Run("the metadata client of the garbage collector is served", func(t *testing.T) {
		// Metadata is a meta.k8s.io type, which has protobuf marshallers.
		code, ct, body := get(t, list, "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")
		assert.Equal(t, http.StatusOK, code)
		assert.Contains(t, ct, "application/vnd.kubernetes.protobuf")
		assert.Contains(t, body, "PartialObjectMetadataList")
	})
	t.Run("YAML", func(t *testing.T) {
		code, ct, _ := get(t, list, "application/yaml")
		assert.Equal(t, http.StatusOK, code)
		assert.Equal(t, "application/yaml", ct)
	})
}
