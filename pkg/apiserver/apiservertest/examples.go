package apiservertest

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"sigs.k8s.io/yaml"
)

// Example is one of the project's example manifests, as YAML and as JSON.
type Example struct {
	Kind       string
	YAML, JSON []byte
}

// Examples reads the example manifests in dir (artifacts/examples, relative to the calling
// package), so that fuzz targets start from objects a user would really send.
func Examples(tb testing.TB, dir string) []Example {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no example manifests in %s: %v", dir, err)
	}
	sort.Strings(files)
	var out []Example
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			tb.Fatalf("reading %s: %v", file, err)
		}
		json, err := yaml.YAMLToJSON(data)
		if err != nil {
			tb.Fatalf("%s is not YAML: %v", file, err)
		}
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(data, &meta); err != nil || meta.Kind == "" {
			tb.Fatalf("%s names no kind: %v", file, err)
		}
		out = append(out, Example{Kind: meta.Kind, YAML: data, JSON: json})
	}
	return out
}

// ExampleOf returns the example manifest of kind; the examples hold one of each kind.
func ExampleOf(tb testing.TB, examples []Example, kind string) Example {
	tb.Helper()
	for _, e := range examples {
		if e.Kind == kind {
			return e
		}
	}
	tb.Fatalf("no example of kind %s", kind)
	return Example{}
}
