package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/pkg/preview"
)

const setupYAML = `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: root
spec:
  version: v0.32.3
---
apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: a
  namespace: team-b
spec:
  image:
    tag: v0.32.3
`

// TestPlan: each object is applied as a server-side dry run, as field manager kubectl, and
// the preview the server answers with is printed under it; other warnings go to stderr.
func TestPlan(t *testing.T) {
	var mu sync.Mutex
	var requests []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		requests = append(requests, fmt.Sprintf("%s %s?%s %s", r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type")))
		mu.Unlock()
		name := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		w.Header().Add("Warning", fmt.Sprintf(`299 - "preview: Shard/%s: Deployment %s-shard-kcp rolls (image v0.31.6→v0.32.3)"`, name, name))
		w.Header().Add("Warning", `299 - "spec.something is deprecated"`)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"X","metadata":{"name":"` + name + `"}}`))
		assert.NotEmpty(t, body)
	}))
	defer server.Close()

	file := filepath.Join(t.TempDir(), "setup.yaml")
	require.NoError(t, os.WriteFile(file, []byte(setupYAML), 0o600))
	var stdout, stderr bytes.Buffer
	code := run([]string{"plan", "-f", file, "--server", server.URL, "-n", "team-a"}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.Equal(t, "RootShard team-a/root:\n  Shard/root: Deployment root-shard-kcp rolls (image v0.31.6→v0.32.3)\n\n"+
		"Shard team-b/a:\n  Shard/a: Deployment a-shard-kcp rolls (image v0.31.6→v0.32.3)\n", stdout.String())
	assert.Equal(t, "Warning: spec.something is deprecated\nWarning: spec.something is deprecated\n", stderr.String())
	assert.Equal(t, []string{
		"PATCH /apis/operator.kcp.io/v1alpha1/namespaces/team-a/rootshards/root?dryRun=All&fieldManager=kubectl&force=true application/apply-patch+yaml",
		"PATCH /apis/operator.kcp.io/v1alpha1/namespaces/team-b/shards/a?dryRun=All&fieldManager=kubectl&force=true application/apply-patch+yaml",
	}, requests)
}

func TestPlanUsage(t *testing.T) {
	dir := t.TempDir()
	deployment := filepath.Join(dir, "d.yaml")
	require.NoError(t, os.WriteFile(deployment, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"), 0o600))
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"plan"}, "error: -f names at least one file, or - for stdin\nSee 'kubectl kcp-setups plan -h'"},
		{[]string{"plan", "rootshard/root"}, "error: plan takes its objects from -f, not as arguments"},
		{[]string{"plan", "-f", deployment}, `Deployment "d" is not a setup kind of operator.kcp.io`},
	} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, 1, run(tc.args, &stdout, &stderr), "%v", tc.args)
		assert.Contains(t, stderr.String(), tc.says, "%v", tc.args)
		assert.Empty(t, stdout.String())
	}
}

func TestReadObjectsFromStdin(t *testing.T) {
	objs, err := readObjects("-", strings.NewReader(setupYAML+"---\n"))
	require.NoError(t, err)
	require.Len(t, objs, 2)
	assert.Equal(t, "RootShard", objs[0].GetKind())
	assert.Equal(t, "team-b", objs[1].GetNamespace())
}

// TestPreviewPrefix: the plugin knows the server's preview lines by their prefix.
func TestPreviewPrefix(t *testing.T) {
	assert.Equal(t, preview.Prefix, previewPrefix)
}
