// Package e2e drives the kcp-setups server as a user would: through kube-apiserver's
// aggregation layer, with kubectl, on the real local stack of test/framework.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

// stack is the local stack every test of the package shares but the fault tests: starting it
// takes a while. A helper reaches the stack of the test it serves with stackOf.
var stack *framework.Stack

func TestMain(m *testing.M) {
	flag.Parse()
	// The fault tests' stack starts beside the shared one when the whole suite runs, so
	// that it is up when they are; a run of some tests (-run) starts it only when the first
	// fault test asks for it.
	if f := flag.Lookup("test.run"); f == nil || f.Value.String() == "" {
		faults.start()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	s, err := framework.Start(ctx, framework.Options{RecordForLeakScan: true, LogReconciles: true, Progress: func(format string, args ...any) {
		fmt.Printf("e2e: "+format+"\n", args...)
	}})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting the stack:", err)
		faults.stop()
		os.Exit(1)
	}
	stack = s
	// The install's self-service roles, which many tests apply as they start
	// (withSelfServiceRoles): applied once here too, so that tests running in parallel never
	// race to create them.
	if out, err := stack.Kubectl(context.Background(), "apply", "-f", deployDir+"/roles.yaml"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: applying the self-service roles:", err, out)
		stack.Stop()
		faults.stop()
		os.Exit(1)
	}
	code := m.Run()
	timeline.report(os.Stdout, 15)
	// Each stack the tests ran on is scanned, and its logs dumped when a test on it failed;
	// no log is dumped when a scan found a key, since the logs would show it.
	ran := []ranOn{{"the shared stack", stack, code != 0 && (sharedFailed.Load() || !faults.failed.Load())}}
	if fs := faults.started(); fs != nil {
		ran = append(ran, ranOn{"the fault tests' stack", fs, faults.failed.Load()})
	}
	leaks := 0
	for _, r := range ran {
		fmt.Printf("e2e: %s:\n", r.name)
		leaks = max(leaks, scanForLeaks(r.stack))
	}
	if leaks != 0 {
		// The logs would show the keys the scan found, which it never prints.
		fmt.Fprintln(os.Stderr, "e2e: the component logs are not dumped: they may hold keys")
		code = leaks
	}
	for _, r := range ran {
		if leaks == 0 && r.failed {
			fmt.Fprintf(os.Stderr, "e2e: the logs of %s:\n", r.name)
			r.stack.DumpLogs(os.Stderr, 60)
		}
		r.stack.Stop()
	}
	os.Exit(code)
}

// ranOn is a stack the tests ran on, and whether one of them failed there.
type ranOn struct {
	name   string
	stack  *framework.Stack
	failed bool
}

// scanForLeaks is issue 10, "Secrets never leak", run on a stack once the whole suite has: no
// component log, Event, status or response the tests saw, other than a mint's answer to its
// own requester, holds a private key. It prints where it looked and what it found, and
// returns the exit code it calls for.
func scanForLeaks(s *framework.Stack) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	report, err := s.ScanForLeaks(ctx)
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

// stacks are the stacks the tests run on other than the shared one, by top-level test name.
var stacks sync.Map

// stackOf is the stack the test t (or the top-level test it is a subtest of) runs on: the
// fault tests' own (onFaultStack), or the shared one.
func stackOf(t *testing.T) *framework.Stack {
	if s, ok := stacks.Load(strings.SplitN(t.Name(), "/", 2)[0]); ok {
		return s.(*framework.Stack)
	}
	return stack
}

// kubectl runs kubectl as the admin and fails the test on error.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	return kubectlOn(t, stackOf(t), args...)
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
	s := stackOf(t)
	t.Cleanup(func() {
		_, _ = s.Kubectl(context.Background(), "delete", "namespace", name, "--wait=false")
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
