// Package bench measures how fast the kubeconfig subresource mints credentials, on the
// real local stack, next to core TokenRequest on the same kube-apiserver in the same run.
// Run it with `make bench`; it prints numbers and asserts none.
package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	"github.com/kcp-setups/apiserver/test/framework"
)

// clients is the number of concurrent clients of every measurement.
const clients = 16

const namespace = "bench"

var stack *framework.Stack

func TestMain(m *testing.M) {
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
	err = prepare(ctx)
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: preparing:", err)
		stack.DumpLogs(os.Stderr, 40)
	} else {
		code = m.Run()
	}
	stack.Stop()
	os.Exit(code)
}

// prepare creates a RootShard and a ServiceAccount and waits until the RootShard can mint.
func prepare(ctx context.Context) error {
	if _, err := stack.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := stack.Kube.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	ops, err := clientset.NewForConfig(stack.AdminConfig)
	if err != nil {
		return err
	}
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root"}, Spec: operatorv1alpha1.RootShardSpec{
		External:        operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com"},
		CommonShardSpec: operatorv1alpha1.CommonShardSpec{Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}},
	}}
	if _, err := ops.OperatorV1alpha1().RootShards(namespace).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := ops.OperatorV1alpha1().RootShards(namespace).CreateKubeconfig(ctx, "root", &operatorv1alpha1.KubeconfigRequest{}, metav1.CreateOptions{})
		return err == nil, nil
	})
}

// fast lifts client-go's default rate limit, which would measure the client.
func fast(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, clients
	return cfg
}

// measure runs op b.N times from clients goroutines and reports the rate and latencies.
func measure(b *testing.B, op func(ctx context.Context) error) {
	var (
		next      atomic.Int64
		mu        sync.Mutex
		latencies = make([]time.Duration, 0, b.N)
		failed    error
	)
	ctx := b.Context()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			var own []time.Duration
			for next.Add(1) <= int64(b.N) {
				t := time.Now()
				if err := op(ctx); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
				own = append(own, time.Since(t))
			}
			mu.Lock()
			latencies = append(latencies, own...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failed != nil {
		b.Fatal(failed)
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "ops/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkMint compares the kubeconfig subresource, called on the server directly and
// through kube-apiserver's aggregation layer, with TokenRequest on kube-apiserver.
func BenchmarkMint(b *testing.B) {
	mint := func(cfg *rest.Config) func(ctx context.Context) error {
		ops := clientset.NewForConfigOrDie(fast(cfg)).OperatorV1alpha1().RootShards(namespace)
		return func(ctx context.Context) error {
			_, err := ops.CreateKubeconfig(ctx, "root", &operatorv1alpha1.KubeconfigRequest{}, metav1.CreateOptions{})
			return err
		}
	}
	b.Run("kubeconfig-direct", func(b *testing.B) { measure(b, mint(stack.ServerConfig())) })
	b.Run("kubeconfig-aggregated", func(b *testing.B) { measure(b, mint(stack.AdminConfig)) })
	b.Run("tokenrequest", func(b *testing.B) {
		sa := kubernetes.NewForConfigOrDie(fast(stack.AdminConfig)).CoreV1().ServiceAccounts(namespace)
		measure(b, func(ctx context.Context) error {
			_, err := sa.CreateToken(ctx, "bench", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			return err
		})
	})
}
