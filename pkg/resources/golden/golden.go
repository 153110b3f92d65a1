// Package golden compares builder output with files under testdata/, refreshed with the
// test flag -update.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with the current output")

// Assert compares objects, as YAML documents, with testdata/<name>.yaml.
func Assert(t *testing.T, name string, objects ...any) {
	t.Helper()
	var out []byte
	for _, o := range objects {
		doc, err := yaml.Marshal(o)
		require.NoError(t, err)
		out = append(out, []byte("---\n")...)
		out = append(out, doc...)
	}
	path := filepath.Join("testdata", name+".yaml")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, out, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file: run go test %s -update", "./"+filepath.Dir(path))
	require.Equal(t, string(want), string(out), "output differs from %s: check the change, then run the test with -update", path)
}
