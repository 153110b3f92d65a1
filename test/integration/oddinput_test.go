package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kcp-setups/apiserver/pkg/apiserver/apiservertest"
)

const groupPath = "/apis/operator.kcp.io/v1alpha1/namespaces/" + namespace

// rawClient sends bodies to the server exactly as given.
type rawClient struct {
	t      *testing.T
	http   *http.Client
	server string
}

func newRawClient(t *testing.T, s *testServer) rawClient {
	c, err := rest.HTTPClientFor(s.config)
	require.NoError(t, err)
	return rawClient{t: t, http: c, server: s.config.Host}
}

// do sends body to path and returns the status code and the response body.
func (c rawClient) do(method, path, contentType string, body []byte) (int, []byte) {
	c.t.Helper()
	req, err := http.NewRequestWithContext(c.t.Context(), method, c.server+path, bytes.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	require.NoError(c.t, err)
	defer func() { _ = resp.Body.Close() }()
	out, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return resp.StatusCode, out
}

// rawValue marks where a mutation's raw JSON goes, so that numbers and nesting beyond what
// encoding/json writes are sent verbatim.
const rawValue = "\u0000raw"

// mutation changes a RootShard's document and returns the raw JSON for rawValue, if any.
type mutation func(o, spec, external map[string]any) string

// rootShardJSON is a valid RootShard named name, as a JSON document, changed by mutate.
func rootShardJSON(t *testing.T, name string, mutate mutation) []byte {
	external := map[string]any{"hostname": "kcp.example.com"}
	spec := map[string]any{"etcd": map[string]any{"endpoints": []string{"https://etcd.team-a.svc:2379"}}, "external": external}
	o := map[string]any{"apiVersion": "operator.kcp.io/v1alpha1", "kind": "RootShard", "metadata": map[string]any{"name": name}, "spec": spec}
	raw := ""
	if mutate != nil {
		raw = mutate(o, spec, external)
	}
	data, err := json.Marshal(o)
	require.NoError(t, err)
	return bytes.Replace(data, []byte(`"\u0000raw"`), []byte(raw), 1)
}

func withName(name string) mutation {
	return func(o, _, _ map[string]any) string { o["metadata"] = map[string]any{"name": name}; return "" }
}

func withRaw(field string, at func(o, spec, external map[string]any) map[string]any, raw string) mutation {
	return func(o, spec, external map[string]any) string { at(o, spec, external)[field] = rawValue; return raw }
}

func withAnnotations(name string, annotations map[string]string) mutation {
	return func(o, _, _ map[string]any) string {
		o["metadata"] = map[string]any{"name": name, "annotations": annotations}
		return ""
	}
}

func inSpec(_, spec, _ map[string]any) map[string]any         { return spec }
func inExternal(_, _, external map[string]any) map[string]any { return external }

// manyEndpoints is a list of n valid etcd endpoints.
func manyEndpoints(n int) []string {
	endpoints := make([]string, n)
	for i := range endpoints {
		endpoints[i] = "https://etcd-" + strconv.Itoa(i) + ".team-a.svc:2379"
	}
	return endpoints
}

// nested is depth levels of open, then leaf, then depth levels of closing.
func nested(open, leaf, close string, depth int) string {
	return strings.Repeat(open, depth) + leaf + strings.Repeat(close, depth)
}

// TestOddInputsAreRefused sends oversized, deeply nested, unicode, out-of-range, malformed
// and mistyped bodies through the real server's HTTP API. Each is refused with a 4xx, never
// a 5xx, and nothing of them is stored.
func TestOddInputsAreRefused(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	c := newRawClient(t, s)
	rootShards := groupPath + "/rootshards"
	kubeconfigOfRoot := rootShards + "/root/kubeconfig"

	code, body := c.do(http.MethodPost, rootShards, "application/json", rootShardJSON(t, "root", nil))
	require.Equal(t, http.StatusCreated, code, "%s", body)

	request := func(expiration string) []byte {
		return []byte(`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"KubeconfigRequest","spec":{"expirationSeconds":` + expiration + `}}`)
	}
	const anyClientError = 0
	const protobuf = "application/vnd.kubernetes.protobuf"
	wellFormed, _, err := apiservertest.Decode("application/json", "RootShard", rootShardJSON(t, "pb", nil))
	require.NoError(t, err)
	rootShardProtobuf, err := apiservertest.Encode(protobuf, wellFormed)
	require.NoError(t, err)
	_, _, err = apiservertest.Decode(protobuf, "RootShard", rootShardProtobuf)
	require.NoError(t, err, "the well-formed protobuf the odd ones start from")
	for _, tc := range []struct {
		name        string
		path        string
		contentType string
		body        []byte
		// want is the expected code; anyClientError accepts any 4xx.
		want int
	}{
		// Size. The generic server reads at most 3 MiB of a body; below that, annotations
		// are bounded by validation.
		{"3 MiB annotation", rootShards, "", rootShardJSON(t, "big", withAnnotations("big", map[string]string{"a": strings.Repeat("x", 3<<20)})),
			http.StatusRequestEntityTooLarge},
		{"2.5 MiB annotation", rootShards, "", rootShardJSON(t, "big", withAnnotations("big", map[string]string{"a": strings.Repeat("x", 5<<19)})),
			http.StatusUnprocessableEntity},
		// Valid, but beyond what etcd stores (1.5 MiB): the server says so with a 413.
		{"2.5 MiB of etcd endpoints", rootShards, "", rootShardJSON(t, "big", func(_, spec, _ map[string]any) string {
			spec["etcd"] = map[string]any{"endpoints": manyEndpoints(70000)}
			return ""
		}), http.StatusRequestEntityTooLarge},

		// Depth.
		{"10000 nested arrays in a list of strings", rootShards, "",
			rootShardJSON(t, "deep", withRaw("etcd", inSpec, `{"endpoints":`+nested("[", `"https://e:2379"`, "]", 10000)+`}`)), http.StatusBadRequest},
		{"10000 nested objects in an unknown field", rootShards, "",
			rootShardJSON(t, "deep", withRaw("hostname", inExternal, nested(`{"a":`, "1", "}", 10000))), anyClientError},
		{"100000 nested arrays in an unknown field", rootShards, "",
			rootShardJSON(t, "deep", withRaw("x", inSpec, nested("[", "", "]", 100000))), anyClientError},

		// Unicode: names are DNS labels.
		{"non-ASCII name", rootShards, "", rootShardJSON(t, "", withName("wurzel-ü")), http.StatusUnprocessableEntity},
		{"CJK name", rootShards, "", rootShardJSON(t, "", withName("根")), http.StatusUnprocessableEntity},
		{"zero-width space in name", rootShards, "", rootShardJSON(t, "", withName("root\u200b")), http.StatusUnprocessableEntity},
		{"non-ASCII hostname", rootShards, "", rootShardJSON(t, "idn", withRaw("hostname", inExternal, `"kcp.exämple.com"`)), http.StatusUnprocessableEntity},
		{"invalid UTF-8 in name", rootShards, "", []byte("{\"apiVersion\":\"operator.kcp.io/v1alpha1\",\"kind\":\"RootShard\",\"metadata\":{\"name\":\"r\xff\"}}"),
			http.StatusUnprocessableEntity},

		// Numbers.
		{"replicas -1", rootShards, "", rootShardJSON(t, "num", withRaw("replicas", inSpec, "-1")), http.StatusUnprocessableEntity},
		{"port -1", rootShards, "", rootShardJSON(t, "num", withRaw("port", inExternal, "-1")), http.StatusUnprocessableEntity},
		{"port 1e20", rootShards, "", rootShardJSON(t, "num", withRaw("port", inExternal, "1e20")), http.StatusBadRequest},
		{"port 2^63", rootShards, "", rootShardJSON(t, "num", withRaw("port", inExternal, "9223372036854775808")), http.StatusBadRequest},
		{"port 2^31", rootShards, "", rootShardJSON(t, "num", withRaw("port", inExternal, "2147483648")), http.StatusBadRequest},
		{"port 443.5", rootShards, "", rootShardJSON(t, "num", withRaw("port", inExternal, "443.5")), http.StatusBadRequest},
		{"replicas 2.0", rootShards, "", rootShardJSON(t, "num", withRaw("replicas", inSpec, "2.0")), http.StatusBadRequest},
		{"port as a string", rootShards, "", rootShardJSON(t, "num", withRaw("port", inExternal, `"443"`)), http.StatusBadRequest},

		// A credential's lifetime near int64's limits: validation bounds it from below, and
		// the server clamps it from above (FuzzKubeconfigRequest checks the clamp). This tier
		// authenticates nobody, so a request that passes validation is refused for its
		// missing user, which is still no 5xx.
		{"expirationSeconds MaxInt64", kubeconfigOfRoot, "", request(strconv.FormatInt(math.MaxInt64, 10)), http.StatusForbidden},
		{"expirationSeconds MaxInt64-1", kubeconfigOfRoot, "", request(strconv.FormatInt(math.MaxInt64-1, 10)), http.StatusForbidden},
		{"expirationSeconds -MaxInt64", kubeconfigOfRoot, "", request(strconv.FormatInt(-math.MaxInt64, 10)), http.StatusUnprocessableEntity},
		{"expirationSeconds MinInt64", kubeconfigOfRoot, "", request(strconv.FormatInt(math.MinInt64, 10)), http.StatusUnprocessableEntity},
		{"expirationSeconds 2^63", kubeconfigOfRoot, "", request("9223372036854775808"), http.StatusBadRequest},
		{"expirationSeconds 3600.5", kubeconfigOfRoot, "", request("3600.5"), http.StatusBadRequest},

		// Malformed documents.
		{"empty body", rootShards, "", nil, http.StatusBadRequest},
		{"truncated JSON", rootShards, "", []byte(`{"apiVersion":"operator.kcp.io/v1alpha1","kind":`), http.StatusBadRequest},
		{"trailing garbage", rootShards, "", append(rootShardJSON(t, "trail", nil), []byte(`}}`)...), http.StatusBadRequest},
		{"a JSON array", rootShards, "", []byte(`[]`), http.StatusBadRequest},
		{"JSON null, an empty object", rootShards, "", []byte(`null`), http.StatusUnprocessableEntity},
		{"malformed YAML", rootShards, "application/yaml", []byte("apiVersion: operator.kcp.io/v1alpha1\nkind: RootShard\nmetadata: {name: [\n"), http.StatusBadRequest},
		{"malformed request", kubeconfigOfRoot, "", []byte(`{"spec":{"expirationSeconds":}`), http.StatusBadRequest},
		{"protobuf without its magic", rootShards, protobuf, []byte("\x0a\x00garbage"), http.StatusBadRequest},
		{"truncated protobuf", rootShards, protobuf, rootShardProtobuf[:len(rootShardProtobuf)/2], http.StatusBadRequest},
		{"protobuf with a field longer than the body", rootShards, protobuf, append(bytes.Clone(rootShardProtobuf), 0x12, 0x7f), http.StatusBadRequest},
		{"JSON posted as protobuf", rootShards, protobuf, rootShardJSON(t, "mislabeled", nil), http.StatusBadRequest},
		{"protobuf posted as JSON", rootShards, "application/json", rootShardProtobuf, http.StatusBadRequest},

		// Wrong types.
		{"a Shard posted as a RootShard", rootShards, "", bytes.Replace(rootShardJSON(t, "wrong", nil), []byte(`"kind":"RootShard"`), []byte(`"kind":"Shard"`), 1),
			http.StatusBadRequest},
		{"an unknown version", rootShards, "", bytes.Replace(rootShardJSON(t, "wrong", nil), []byte(`v1alpha1`), []byte(`v2`), 1), http.StatusBadRequest},
		{"a Pod", rootShards, "", []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"wrong"}}`), http.StatusBadRequest},
		{"a request posted as a RootShard", rootShards, "", []byte(`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"KubeconfigRequest","metadata":{"name":"wrong"}}`),
			http.StatusBadRequest},
		{"a RootShard posted as a request", kubeconfigOfRoot, "", rootShardJSON(t, "root", nil), http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			contentType := tc.contentType
			if contentType == "" {
				contentType = "application/json"
			}
			c.t = t
			code, body := c.do(http.MethodPost, tc.path, contentType, tc.body)
			if tc.want == anyClientError {
				assert.True(t, code >= 400 && code < 500, "got %d: %.500s", code, body)
			} else {
				assert.Equal(t, tc.want, code, "%.500s", body)
			}
		})
	}
	c.t = t
	code, body = c.do(http.MethodPut, rootShards+"/root", "application/json", rootShardJSON(t, "root", func(_, spec, _ map[string]any) string {
		spec["etcd"] = map[string]any{"endpoints": manyEndpoints(70000)}
		return ""
	}))
	assert.Equal(t, http.StatusRequestEntityTooLarge, code, "an update too large to store: %.500s", body)
	assert.Equal(t, []string{"root"}, storedNames(t, s.client), "nothing refused may be stored")
}

// TestUnicodeInFreeTextRoundTrips stores unicode where free text is allowed, and reads it
// back unchanged.
func TestUnicodeInFreeTextRoundTrips(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	c := newRawClient(t, s)
	notes := map[string]string{
		"example.com/note":  "Größe: 日本語, עברית, emoji 🚀, combining e\u0301",
		"example.com/empty": "",
		"example.com/ctrl":  "tab\tnewline\nnul-free",
	}
	code, body := c.do(http.MethodPost, groupPath+"/rootshards", "application/json", rootShardJSON(t, "unicode", withAnnotations("unicode", notes)))
	require.Equal(t, http.StatusCreated, code, "%s", body)

	code, body = c.do(http.MethodGet, groupPath+"/rootshards/unicode", "", nil)
	require.Equal(t, http.StatusOK, code, "%s", body)
	var got struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(body, &got))
	assert.Equal(t, notes, got.Metadata.Annotations, fmt.Sprintf("%s", body))
}
