package framework

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/keyutil"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

func newKeyPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	data, err := keyutil.MarshalPrivateKeyToPEM(key)
	require.NoError(t, err)
	return data
}

// derBase64 is a key's DER in base64 on one line, with no PEM marker around it.
func derBase64(t *testing.T, keyPEM []byte) string {
	t.Helper()
	block, _ := pem.Decode(keyPEM)
	require.NotNil(t, block)
	return base64.StdEncoding.EncodeToString(block.Bytes)
}

// kubeconfigWith is a kubeconfig whose user authenticates with keyPEM.
func kubeconfigWith(keyPEM []byte) string {
	return "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    client-key-data: " + base64.StdEncoding.EncodeToString(keyPEM) + "\n"
}

// clean is text that must not be taken for a key: certificates, base64 and talk of keys.
func clean(t *testing.T) string {
	ca, err := localstack.LoadOrCreateCA(t.TempDir(), "ca")
	require.NoError(t, err)
	random := make([]byte, 300)
	_, _ = rand.Read(random)
	return fmt.Sprintf("I1123 flags: --tls-private-key-file=/pki/tls.key\nStored new private key in temporary Secret\nThe first PEM block is a PRIVATE KEY block\n%s\n%s\n%s\n",
		ca.CertPEM, base64.StdEncoding.EncodeToString(ca.CertPEM), base64.StdEncoding.EncodeToString(random))
}

// scanOf writes the places of a scan in a temporary directory, each with the clean text and
// what the case plants, and scans them for the held keys.
func scanOf(t *testing.T, c string, held map[string][]byte, log, event, status, response string) *Report {
	t.Helper()
	dir := t.TempDir()
	in := ScanInput{Keys: held, Logs: []string{filepath.Join(dir, "component.log")},
		Events: filepath.Join(dir, "events.log"), Statuses: filepath.Join(dir, "statuses.log"), Responses: filepath.Join(dir, "responses")}
	require.NoError(t, os.MkdirAll(in.Responses, 0o700))
	require.NoError(t, localstack.WriteFiles(map[string][]byte{
		in.Logs[0]:  []byte(c + log),
		in.Events:   []byte("Event ns/e1\t" + jsonString(t, c) + "\nEvent ns/e2\t" + jsonString(t, event) + "\n"),
		in.Statuses: []byte("rootshards ns/root\t" + jsonString(t, status) + "\n"),
		filepath.Join(in.Responses, "000001.txt"):   []byte("# kubectl get rootshards\n" + c),
		filepath.Join(in.Responses, "000002.txt"):   []byte("# GET /apis/operator.kcp.io/v1alpha1/namespaces/ns/rootshards/root 200\n" + response),
		filepath.Join(in.Responses, "000003.jpeg"):  nil, // any file in the directory is a response
		filepath.Join(dir, "not-scanned", "x.log"):  []byte(log + event + status + response),
		filepath.Join(dir, "responses-elsewhere/a"): []byte(response),
	}))
	r, err := ScanForKeys(in)
	require.NoError(t, err)
	return r
}

func jsonString(t *testing.T, s string) string {
	data, err := json.Marshal(map[string]string{"message": s})
	require.NoError(t, err)
	return string(data)
}

func TestScanForKeysFindsEachForm(t *testing.T) {
	held, unheld := newKeyPEM(t), newKeyPEM(t)
	keys := map[string][]byte{"Secret ns/held[tls.key]": held}
	heldKey := "the key held in Secret ns/held[tls.key]"
	c := clean(t)
	// What a case plants in a log starts on the line after the clean text.
	plantedLine := fmt.Sprintf("log component.log:%d", strings.Count(c, "\n")+1)
	for _, tc := range []struct {
		name                         string
		log, event, status, response string
		wantPlace                    string
		wantWhat                     []string
	}{
		{name: "a PEM block of a key the stack never held, in a log", log: string(unheld),
			wantPlace: plantedLine, wantWhat: []string{"a PRIVATE KEY block"}},
		{name: "a held key's DER as base64, with no marker, in a log", log: "key=" + derBase64(t, held) + "\n",
			wantPlace: plantedLine, wantWhat: []string{heldKey + " (PEM or DER base64)"}},
		{name: "a held key as a Secret's data holds it, in an Event", event: "data: " + base64.StdEncoding.EncodeToString(held),
			wantPlace: "Event ns/e2", wantWhat: []string{"the base64 of a PRIVATE KEY block", "the base64 of " + heldKey}},
		{name: "a kubeconfig with a held key, as a Secret holds it, in a status", status: base64.StdEncoding.EncodeToString([]byte(kubeconfigWith(held))),
			wantPlace: "rootshards ns/root", wantWhat: []string{"the base64 of the base64 of a PRIVATE KEY block", "the base64 of the base64 of " + heldKey}},
		{name: "a kubeconfig with an unheld key, in a response", response: jsonString(t, kubeconfigWith(unheld)),
			wantPlace: "response 000002.txt:2 GET /apis/operator.kcp.io/v1alpha1/namespaces/ns/rootshards/root 200",
			wantWhat:  []string{"the base64 of a PRIVATE KEY block"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := scanOf(t, c, keys, tc.log, tc.event, tc.status, tc.response)
			require.NotEmpty(t, r.Findings)
			// A PEM block in a log is found at its BEGIN line, and again at its END line.
			assert.Equal(t, tc.wantPlace, r.Findings[0].Place)
			whats := map[string]bool{}
			for _, f := range r.Findings {
				whats[f.What] = true
			}
			assert.ElementsMatch(t, tc.wantWhat, slices.Collect(maps.Keys(whats)))
			assertNoKeyIn(t, r, held, unheld)
		})
	}
}

func TestScanForKeysFindsNothingInCleanInput(t *testing.T) {
	r := scanOf(t, clean(t), map[string][]byte{"Secret ns/held[tls.key]": newKeyPEM(t)}, "", "", "", "")
	assert.Empty(t, r.Findings)
	assert.Equal(t, 1, r.Keys)
	var out bytes.Buffer
	r.Write(&out)
	assert.Contains(t, out.String(), "component logs (files): 1,")
	assert.Contains(t, out.String(), "Events (every version seen): 2,")
	assert.Contains(t, out.String(), "statuses (every version seen): 1,")
	assert.Contains(t, out.String(), "API responses the tests saw: 3,")
	assert.Contains(t, out.String(), "leak scan: 0 findings")
}

// assertNoKeyIn checks that the printed report shows no part of the keys it found.
func assertNoKeyIn(t *testing.T, r *Report, keys ...[]byte) {
	t.Helper()
	var out bytes.Buffer
	r.Write(&out)
	for _, k := range keys {
		assert.NotContains(t, out.String(), derBase64(t, k)[64:96])
	}
}

// TestRecorderTeesAndExcludesMints proves that the recorder hands the caller the whole
// body, records what it scans, and keeps the keys of a mint response without recording it,
// so that the same key found elsewhere is named after it.
func TestRecorderTeesAndExcludesMints(t *testing.T) {
	minted := newKeyPEM(t)
	body := map[string]string{
		"/apis/operator.kcp.io/v1alpha1/namespaces/ns/rootshards/root":            `{"status":{"phase":"Running"}}`,
		"/apis/operator.kcp.io/v1alpha1/namespaces/ns/rootshards/root/kubeconfig": jsonString(t, kubeconfigWith(minted)),
		"/api/v1/namespaces/ns/secrets/root-ca":                                   jsonString(t, base64.StdEncoding.EncodeToString(newKeyPEM(t))),
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, body[r.URL.Path])
	}))
	defer server.Close()
	dir := t.TempDir()
	rec, err := newRecorder(filepath.Join(dir, "responses"), newKeySet())
	require.NoError(t, err)
	client, err := rest.HTTPClientFor(rec.Wrap(&rest.Config{Host: server.URL}))
	require.NoError(t, err)
	for _, req := range []struct{ method, path string }{
		{http.MethodGet, "/apis/operator.kcp.io/v1alpha1/namespaces/ns/rootshards/root"},
		{http.MethodPost, "/apis/operator.kcp.io/v1alpha1/namespaces/ns/rootshards/root/kubeconfig"},
		{http.MethodGet, "/api/v1/namespaces/ns/secrets/root-ca"},
	} {
		r, err := http.NewRequest(req.method, server.URL+req.path, nil)
		require.NoError(t, err)
		resp, err := client.Do(r)
		require.NoError(t, err)
		got, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, body[req.path], string(got), "the caller gets the whole body")
	}
	rec.Kubectl([]string{"create", "--raw", "/apis/operator.kcp.io/v1alpha1/namespaces/ns/rootshards/root/kubeconfig", "-f", "-"}, body["/apis/operator.kcp.io/v1alpha1/namespaces/ns/rootshards/root/kubeconfig"])
	rec.Kubectl([]string{"get", "secret", "root-ca", "-o", "jsonpath={.data.tls\\.key}"}, "LS0t")
	rec.Kubectl([]string{"get", "rootshards"}, "NAME   PHASE\nroot   Running\n")
	assert.Equal(t, map[string]int{excludedMint: 2, excludedSecret: 2}, rec.Excluded())

	recorded, err := filepath.Glob(filepath.Join(dir, "responses", "*"))
	require.NoError(t, err)
	require.Len(t, recorded, 2, "the mints and the Secret reads are not recorded")
	first, err := os.ReadFile(recorded[0])
	require.NoError(t, err)
	assert.Equal(t, "# GET /apis/operator.kcp.io/v1alpha1/namespaces/ns/rootshards/root 200\n"+body["/apis/operator.kcp.io/v1alpha1/namespaces/ns/rootshards/root"], string(first))

	// The minted key, leaked as DER base64 into a log, is found and named after its mint.
	log := filepath.Join(dir, "server.log")
	require.NoError(t, os.WriteFile(log, []byte("minted "+derBase64(t, minted)+"\n"), 0o600))
	require.NoError(t, localstack.WriteFiles(map[string][]byte{filepath.Join(dir, "events"): nil, filepath.Join(dir, "statuses"): nil}))
	report, err := scan(ScanInput{Logs: []string{log}, Events: filepath.Join(dir, "events"), Statuses: filepath.Join(dir, "statuses"),
		Responses: filepath.Join(dir, "responses"), Excluded: rec.Excluded()}, rec.keys)
	require.NoError(t, err)
	require.Len(t, report.Findings, 1)
	assert.Equal(t, "log server.log:1", report.Findings[0].Place)
	assert.True(t, strings.HasPrefix(report.Findings[0].What, "the key held in POST /apis/operator.kcp.io/v1alpha1/namespaces/ns/rootshards/root/kubeconfig 200"), report.Findings[0].What)
	var out bytes.Buffer
	report.Write(&out)
	assert.Contains(t, out.String(), "API responses the tests saw: 2, 154 bytes (2 Secret responses not scanned, 2 mint responses not scanned)")
}
