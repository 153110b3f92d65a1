// Command local-up runs the whole local stack in the foreground for `make run`: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, kwok, cert-manager, the
// kcp-setups server on its embedded etcd, and the members of every managed etcd it realizes. State lives in _output/run/ and survives a restart;
// Ctrl-C stops everything.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "make run:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	dir, err := filepath.Abs(filepath.Join("_output", "run"))
	if err != nil {
		return err
	}
	start := time.Now()
	opts := localstack.LocalUp(dir)
	opts.Progress = func(format string, args ...any) { fmt.Printf("==> "+format+"\n", args...) }
	stack, err := localstack.Start(ctx, opts)
	if err != nil {
		return err
	}
	fmt.Printf(`
kcp-setups is serving operator.kcp.io/v1alpha1 (up in %s). In another terminal:

    export KUBECONFIG=%s
    export PATH="%s:$PATH"    # the pinned kubectl, if you have none
    kubectl apply -f %s
    kubectl get kcp

No kcp runs behind kwok's pods here: KcpReady says Unknown (NoKcpDialer), and deletions do
not wait for kcp. A managed etcd's members run as etcd processes (logs/etcd-members.log), so
EtcdReady is etcd's own answer. Component logs are in %s. Press Ctrl-C to stop; data in %s
is kept for the next run.
`, time.Since(start).Round(time.Second), stack.AdminKubeconfig, filepath.Join(mustGetwd(), "_output", "bin"),
		filepath.Join(mustGetwd(), "artifacts", "examples")+"/", filepath.Join(dir, "logs"), dir)

	<-ctx.Done()
	fmt.Println("\n==> stopping")
	stack.Stop()
	fmt.Println("==> stopped")
	return nil
}

func mustGetwd() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return wd
}
