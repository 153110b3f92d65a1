// Package bench is the benchmark suite of `make bench`: each benchmark starts what it needs on
// the real local stack, prints its figures next to an anchor measured in the same run (the
// machine is shared and noisy), and records them in _output/bench/results.json. It prints
// numbers and asserts none, except that no request failed.
//
// Run one with `make bench BENCH=mint` (or ready, crud, scale, link, snapshot, rotation); `make bench` runs them all.
package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/test/framework"
)

var stack *framework.Stack

func TestMain(m *testing.M) {
	flag.Parse()
	// `go test ./...` and `go vet` build this package too: without -bench there is nothing
	// to run, and no stack to start.
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	s, err := framework.Start(ctx, framework.Options{Progress: func(format string, args ...any) {
		fmt.Printf("bench: "+format+"\n", args...)
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: starting the stack:", err)
		os.Exit(1)
	}
	stack = s
	code := m.Run()
	if code != 0 {
		stack.DumpLogs(os.Stderr, 40)
	}
	stack.Stop()
	os.Exit(code)
}

// createNamespace creates a namespace of the host cluster for one measurement.
func createNamespace(ctx context.Context, name string) error {
	_, err := stack.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	return err
}
