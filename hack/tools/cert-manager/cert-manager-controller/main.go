// Command cert-manager-controller runs cert-manager's own controllers, from the pinned
// cert-manager module, for the local stack and the end-to-end tests: the CA and self-signed
// issuers, Certificates and the approver. cert-manager's command module is not on the module
// proxy; this main wires the public controller packages the way it does, without leader
// election, webhooks or ACME.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/cert-manager/cert-manager/pkg/controller"
	"k8s.io/klog/v2"

	// The controllers register themselves with controller.Known().
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	// Without the issuer backends, Issuers never turn Ready ("issuer 'ca' not registered").
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "Path to the kubeconfig of the cluster to run in.")
	clusterResourceNamespace := flag.String("cluster-resource-namespace", "kube-system",
		"Namespace of the Secrets that ClusterIssuers refer to.")
	workers := flag.Int("workers", 5, "Workers per controller.")
	klog.InitFlags(nil)
	flag.Parse()

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, *kubeconfig, *clusterResourceNamespace, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "cert-manager-controller:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, clusterResourceNamespace string, workers int) error {
	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   100,
		KubernetesAPIBurst: 200,
		IssuerOptions:      controller.IssuerOptions{ClusterResourceNamespace: clusterResourceNamespace},
		CertificateOptions: controller.CertificateOptions{
			EnableOwnerRef: true,
			// Upstream backs off 1h to 32h after a failed request; a local stack retries fast.
			CertificateRequestMinimumBackoffDuration: time.Second,
			CertificateRequestMaximumBackoffDuration: 30 * time.Second,
		},
	})
	if err != nil {
		return err
	}

	// Build every controller before starting the informers: constructors ask for the
	// informers they need, and an informer asked for after Start would never sync.
	known := controller.Known()
	names := make([]string, 0, len(known))
	for name := range known {
		names = append(names, name)
	}
	sort.Strings(names)
	controllers := make(map[string]controller.Interface, len(names))
	for _, name := range names {
		c, err := known[name](factory)
		if err != nil {
			return fmt.Errorf("building controller %s: %w", name, err)
		}
		controllers[name] = c
	}

	shared, err := factory.Build()
	if err != nil {
		return err
	}
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())

	klog.InfoS("Starting cert-manager controllers", "controllers", names)
	var wg sync.WaitGroup
	errs := make(chan error, len(controllers))
	for name, c := range controllers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Run(workers, ctx); err != nil {
				errs <- fmt.Errorf("controller %s: %w", name, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}
