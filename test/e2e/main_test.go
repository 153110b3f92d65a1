// Package e2e drives the kcp-setups server as a user would: through kube-apiserver's
// aggregation layer, with kubectl, on the real local stack of test/framework.
package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

// stack is the one local stack every test of the package shares: starting it takes a while.
var stack *framework.Stack

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	s, err := framework.Start(ctx, framework.Options{Progress: func(format string, args ...any) {
		fmt.Printf("e2e: "+format+"\n", args...)
	}})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting the stack:", err)
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
