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
	s, err := framework.Start(ctx, framework.Options{RecordForLeakScan: true, LogReconciles: true, Progress: func(format string, args ...any) {
		fmt.Printf("e2e: "+format+"\n", args...)
	}})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting the stack:", err)
		os.Exit(1)
	}
	stack = s
	// The install's self-service roles, which many tests apply as they start
	// (withSelfServiceRoles): applied once here too, so that tests running in parallel never
	// race to create them.
	if out, err := stack.Kubectl(context.Background(), "apply", "-f", deployDir+"/roles.yaml"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: applying the self-service roles:", err, out)
		stack.Stop()
		os.Exit(1)
	}
	code := m.Run()
	leaks := scanForLeaks()
	switch {
	case leaks != 0:
		// The logs would show the keys the scan found, which it never prints.
		fmt.Fprintln(os.Stderr, "e2e: the component logs are not dumped: they may hold keys")
		code = leaks
	case code != 0:
		stack.DumpLogs(os.Stderr, 60)
	}
	stack.Stop()
	os.Exit(code)
}

// scanForLeaks is issue 10, "Secrets never leak", run once the whole suite has: no component
// log, Event, status or response the tests saw, other than a mint's answer to its own
// requester, holds a private key. It prints where it looked and what it found, and returns
// the exit code it calls for.
func scanForLeaks() int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	report, err := stack.ScanForLeaks(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: the leak scan failed:", err)
		return 1
	}
	report.Write(os.Stdout)
	if len(report.Findings) > 0 {
		fmt.Println("e2e: FAIL: private keys leaked where they must not be")
		return 1
	}
	return 0
}

// kubectl runs kubectl as the admin and fails the test on error.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	return kubectlOn(t, stack, args...)
}

// kubectlOn runs kubectl as the admin of the stack s (a second cluster's) and fails the test
// on error.
func kubectlOn(t *testing.T, s *framework.Stack, args ...string) string {
	t.Helper()
	out, err := s.Kubectl(t.Context(), args...)
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

// withSelfServiceRoles applies the install's self-service roles, which aggregate into the
// built-in admin, edit and view, and which stay in place until the test ends: the test runs
// with them shared (parallel(t, sharedRoles)), so TestHelmChart, whose release owns them
// while it runs, never runs meanwhile.
func withSelfServiceRoles(t *testing.T) {
	t.Helper()
	if _, held := rolesHeld.Load(strings.SplitN(t.Name(), "/", 2)[0]); !held {
		t.Fatal("withSelfServiceRoles: the test must start with parallel(t, sharedRoles)")
	}
	kubectl(t, "apply", "-f", deployDir+"/roles.yaml")
}
