package bench

import (
	"context"
	"fmt"
	"net"
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
)

const mintNamespace = "bench-mint"

// The loads of the mint benchmark: a steady one, as `make bench` always measured, and a
// crowd that holds a connection per client.
var (
	steady = load{clients: 16, duration: 10 * time.Second}
	crowd  = load{clients: 200, duration: 60 * time.Second}
)

// BenchmarkMint compares the kubeconfig subresource, called on the server directly and
// through kube-apiserver's aggregation layer, with TokenRequest on kube-apiserver, from 16
// clients and from 200; it profiles the server's CPU during the direct run, and the
// server's and kube-apiserver's during the aggregated one. Dry runs of the same calls
// measure the floor of each path: everything a mint does (authentication, authorization,
// admission, validation, the target and the identity) except the certificate and the
// kubeconfig, so that what the credential itself costs shows next to what any request
// to the server costs.
func BenchmarkMint(b *testing.B) {
	ctx := b.Context()
	if err := prepareMint(ctx); err != nil {
		b.Fatal(err)
	}
	e := newEntry("mint")
	var direct, aggregated, directFloor, aggregatedFloor, tokens, crowdMints, crowdTokens outcome
	b.Run("kubeconfig-direct", func(b *testing.B) {
		var server *profile
		profiled := steady
		profiled.atStart = func(d time.Duration) { server = startProfile(ctx, "mint-direct-server", profileServer, d) }
		direct = profiled.run(ctx, mint(stack.ServerConfig(), steady.clients, false))
		direct.report(b, e, "kubeconfig-direct")
		server.finish(b, e)
	})
	b.Run("kubeconfig-aggregated", func(b *testing.B) {
		var server, kube *profile
		profiled := steady
		profiled.atStart = func(d time.Duration) {
			server = startProfile(ctx, "mint-aggregated-server", profileServer, d)
			kube = startProfile(ctx, "mint-aggregated-kube-apiserver", profileKubeAPIServer, d)
		}
		aggregated = profiled.run(ctx, mint(stack.AdminConfig, steady.clients, false))
		aggregated.report(b, e, "kubeconfig-aggregated")
		server.finish(b, e)
		kube.finish(b, e)
	})
	b.Run("kubeconfig-direct-dryrun", func(b *testing.B) {
		directFloor = steady.run(ctx, mint(stack.ServerConfig(), steady.clients, true))
		directFloor.report(b, e, "kubeconfig-direct-dryrun")
	})
	b.Run("kubeconfig-aggregated-dryrun", func(b *testing.B) {
		aggregatedFloor = steady.run(ctx, mint(stack.AdminConfig, steady.clients, true))
		aggregatedFloor.report(b, e, "kubeconfig-aggregated-dryrun")
	})
	b.Run("tokenrequest", func(b *testing.B) {
		tokens = steady.run(ctx, tokenRequest(steady.clients))
		tokens.report(b, e, "tokenrequest")
	})
	b.Run("kubeconfig-aggregated-200", func(b *testing.B) {
		crowdMints = crowd.run(ctx, mint(stack.AdminConfig, crowd.clients, false))
		crowdMints.report(b, e, "kubeconfig-aggregated-200")
	})
	b.Run("tokenrequest-200", func(b *testing.B) {
		crowdTokens = crowd.run(ctx, tokenRequest(crowd.clients))
		crowdTokens.report(b, e, "tokenrequest-200")
	})
	if tokens.rate() > 0 {
		e.ratio("16 clients: direct %.0f/s = %.2f× TokenRequest, aggregated %.0f/s = %.2f× TokenRequest (%.0f/s)",
			direct.rate(), direct.rate()/tokens.rate(), aggregated.rate(), aggregated.rate()/tokens.rate(), tokens.rate())
	}
	if tokens.rate() > 0 && directFloor.rate() > 0 && aggregatedFloor.rate() > 0 {
		e.ratio("16 clients, dry runs (no certificate): direct %.0f/s = %.2f× TokenRequest, aggregated %.0f/s = %.2f× TokenRequest",
			directFloor.rate(), directFloor.rate()/tokens.rate(), aggregatedFloor.rate(), aggregatedFloor.rate()/tokens.rate())
	}
	if crowdTokens.rate() > 0 {
		e.ratio("200 clients: aggregated %.0f/s = %.2f× TokenRequest (%.0f/s); p99 %.0f ms against %.0f ms",
			crowdMints.rate(), crowdMints.rate()/crowdTokens.rate(), crowdTokens.rate(), crowdMints.percentile(0.99), crowdTokens.percentile(0.99))
	}
	e.save(b)
}

// prepareMint creates a RootShard and a ServiceAccount and waits until the RootShard can mint.
func prepareMint(ctx context.Context) error {
	if err := createNamespace(ctx, mintNamespace); err != nil {
		return err
	}
	if _, err := stack.Kube.CoreV1().ServiceAccounts(mintNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
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
	if _, err := ops.OperatorV1alpha1().RootShards(mintNamespace).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := ops.OperatorV1alpha1().RootShards(mintNamespace).CreateKubeconfig(ctx, "root", &operatorv1alpha1.KubeconfigRequest{}, metav1.CreateOptions{})
		return err == nil, nil
	})
}

// connections are client configs with a connection of their own each, as separate clients
// have, and without client-go's default rate limit, which would measure the client.
func connections(cfg *rest.Config, n int) []*rest.Config {
	configs := make([]*rest.Config, n)
	for i := range configs {
		c := rest.CopyConfig(cfg)
		c.QPS, c.Burst = -1, 1
		// A Dial of its own keeps client-go from sharing one cached transport.
		c.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		configs[i] = c
	}
	return configs
}

// mint is a call of the kubeconfig subresource per client; a dry run is answered without
// a credential.
func mint(cfg *rest.Config, clients int, dryRun bool) func(ctx context.Context, client int) error {
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var rootShards []func(ctx context.Context) error
	for _, c := range connections(cfg, clients) {
		ops := clientset.NewForConfigOrDie(c).OperatorV1alpha1().RootShards(mintNamespace)
		rootShards = append(rootShards, func(ctx context.Context) error {
			req, err := ops.CreateKubeconfig(ctx, "root", &operatorv1alpha1.KubeconfigRequest{}, opts)
			if err == nil && (req.Status.Kubeconfig == "") != dryRun {
				err = fmt.Errorf("dry run %v, but the answer has a kubeconfig of %d bytes", dryRun, len(req.Status.Kubeconfig))
			}
			return err
		})
	}
	return func(ctx context.Context, client int) error { return rootShards[client](ctx) }
}

// tokenRequest is a TokenRequest per client, the anchor: kube-apiserver signing a credential.
func tokenRequest(clients int) func(ctx context.Context, client int) error {
	var requests []func(ctx context.Context) error
	for _, c := range connections(stack.AdminConfig, clients) {
		sa := kubernetes.NewForConfigOrDie(c).CoreV1().ServiceAccounts(mintNamespace)
		requests = append(requests, func(ctx context.Context) error {
			_, err := sa.CreateToken(ctx, "bench", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			return err
		})
	}
	return func(ctx context.Context, client int) error { return requests[client](ctx) }
}
