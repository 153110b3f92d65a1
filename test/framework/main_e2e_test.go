//go:build e2e

// The harness's own end-to-end tests, on a stack of their own: `make test-e2e` runs them
// with -tags e2e before the product's (test/e2e); `make test-unit` builds this package
// without the tag, and so without a stack.
package framework_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

// stack is the one local stack the harness's tests share.
var stack *framework.Stack

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	s, err := framework.Start(ctx, framework.Options{Progress: func(format string, args ...any) {
		fmt.Printf("harness: "+format+"\n", args...)
	}})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness: starting the stack:", err)
		os.Exit(1)
	}
	stack = s
	code := m.Run()
	if code != 0 {
		stack.DumpLogs(os.Stderr, 60)
	}
	stack.Stop()
	os.Exit(code)
}

// kubectl runs kubectl as the admin and fails the test on error.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := stack.Kubectl(t.Context(), args...)
	require.NoError(t, err, "kubectl %s: %s", strings.Join(args, " "), out)
	return out
}

// namespace creates a namespace for one test and deletes it afterwards.
func namespace(t *testing.T, name string) string {
	t.Helper()
	kubectl(t, "create", "namespace", name)
	t.Cleanup(func() {
		_, _ = stack.Kubectl(context.Background(), "delete", "namespace", name, "--wait=false")
	})
	return name
}

// writeManifest writes content to a file of the test's and returns its path.
func writeManifest(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// nonEmptyLines are the lines of out that are not blank.
func nonEmptyLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
