// Package manager runs the controllers inside the server: it builds the clients and
// informers, elects one leader among the server's replicas on a Lease, and runs every
// kind's controller while leading.
package manager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	cmclientset "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned"
	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/discovery"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/klog/v2"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/controller/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/controller/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/controller/rootshard"
	"github.com/kcp-setups/apiserver/pkg/controller/shard"
	"github.com/kcp-setups/apiserver/pkg/controller/virtualworkspace"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	informers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// resync is how often the informers replay every object, so that drift nobody told us about
// is noticed too; owned objects are watched, so this is a safety net, not the mechanism.
const resync = 10 * time.Hour

// Config configures the controllers.
type Config struct {
	// Loopback reaches this server's own API.
	Loopback *rest.Config
	// Host reaches the cluster the setups are realized in.
	Host *rest.Config
	// LeaderElection configures the election among the server's replicas.
	LeaderElection componentbaseconfig.LeaderElectionConfiguration
	// Workers is the number of concurrent reconciles per kind.
	Workers int
	// KcpDialer names how the controllers reach kcp (kcpclient.New); empty is the default.
	KcpDialer string
	// KcpHealth is how often a ready kcp is asked whether it still is; zero is
	// DefaultKcpHealthInterval.
	KcpHealth time.Duration
}

// DefaultKcpHealthInterval is how often, by default, the controllers ask a ready kcp
// whether it still is.
const DefaultKcpHealthInterval = controller.DefaultKcpHealthInterval

// Run runs the controllers until ctx is done: while leading, or always when leader election
// is off.
func Run(ctx context.Context, cfg Config) error {
	kube, err := kubernetes.NewForConfig(ProtobufConfig(cfg.Host))
	if err != nil {
		return err
	}
	if !cfg.LeaderElection.LeaderElect {
		return runControllers(ctx, cfg, kube)
	}

	host, err := os.Hostname()
	if err != nil {
		return err
	}
	le := cfg.LeaderElection
	identity := host + "_" + string(uuid.NewUUID())
	lock, err := resourcelock.New(le.ResourceLock, le.ResourceNamespace, le.ResourceName,
		kube.CoreV1(), kube.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: identity})
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx).WithValues("lease", le.ResourceNamespace+"/"+le.ResourceName, "identity", identity)
	// Losing the lease (a renewal that failed, as while kube-apiserver restarts) stops the
	// controllers, not the process: this server also serves the API, so it campaigns again,
	// where a built-in controller manager would exit and be restarted.
	for ctx.Err() == nil {
		term := newTerm()
		leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
			Lock:            lock,
			Name:            le.ResourceName,
			LeaseDuration:   le.LeaseDuration.Duration,
			RenewDeadline:   le.RenewDeadline.Duration,
			RetryPeriod:     le.RetryPeriod.Duration,
			ReleaseOnCancel: true,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					defer term.end()
					term.begin()
					logger.Info("Leading: starting the controllers")
					if err := runControllers(ctx, cfg, kube); err != nil {
						logger.Error(err, "Controllers stopped")
					}
				},
				OnStoppedLeading: func() { logger.Info("Not leading: the controllers are stopped") },
			},
		})
		term.wait()
	}
	return nil
}

// runControllers runs every kind's controller until ctx is done.
func runControllers(ctx context.Context, cfg Config, kube kubernetes.Interface) error {
	opClient, err := clientset.NewForConfig(ProtobufConfig(cfg.Loopback))
	if err != nil {
		return err
	}
	certManager, err := cmclientset.NewForConfig(JSONConfig(cfg.Host))
	if err != nil {
		return err
	}
	ourInformers := informers.NewSharedInformerFactory(opClient, resync)
	// Only what the controllers own is cached from the host cluster.
	ours := func(o *metav1.ListOptions) { o.LabelSelector = pki.LabelManagedBy + "=" + pki.ManagedBy }
	hostInformers := cminformers.NewSharedInformerFactoryWithOptions(certManager, resync, cminformers.WithTweakListOptions(ours))
	kubeInformers := kubeinformers.NewSharedInformerFactoryWithOptions(kube, resync, kubeinformers.WithTweakListOptions(ours))
	// The reference Secrets' copies that secretRefs name are the users': they are cached by
	// their label alone, apart from what the controllers own.
	referenceInformers := kubeinformers.NewSharedInformerFactoryWithOptions(kube, resync,
		kubeinformers.WithTweakListOptions(controller.ReferenceSecretSelector))

	scheme := runtime.NewScheme()
	if err := operatorv1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme, corev1.EventSource{Component: pki.ManagedBy})

	// The users' Secrets that pods mount carry no label of ours: their metadata alone is
	// cached, for every Secret, so that a change to one rolls the pods.
	metadataClient, err := metadata.NewForConfig(cfg.Host)
	if err != nil {
		return err
	}
	metadataInformers := metadatainformer.NewSharedInformerFactory(metadataClient, resync)
	host := controller.NewHost(kube, certManager,
		hostInformers.Certmanager().V1().Certificates().Lister(), hostInformers.Certmanager().V1().Issuers().Lister(),
		kubeInformers.Core().V1().Secrets().Lister(), kubeInformers.Core().V1().Services().Lister(), kubeInformers.Apps().V1().Deployments().Lister(),
		kubeInformers.Core().V1().ConfigMaps().Lister()).
		WithDisruptionBudgets(kubeInformers.Policy().V1().PodDisruptionBudgets().Lister()).
		WithStatefulSets(kubeInformers.Apps().V1().StatefulSets().Lister())
	host.SecretMetadata = metadataInformers.ForResource(corev1.SchemeGroupVersion.WithResource("secrets")).Informer()
	if err := host.SecretMetadata.SetTransform(controller.SecretMetadataTransform); err != nil {
		return fmt.Errorf("the Secret metadata cache: %w", err)
	}
	host.ReferenceSecrets = referenceInformers.Core().V1().Secrets().Lister()
	// cert-manager's informers start once its API is served, which it may never be.
	discoveryClient, err := discovery.NewDiscoveryClientForConfig(cfg.Host)
	if err != nil {
		return err
	}
	host.CertManagerAPI = controller.NewCertManagerAPI(discoveryClient, hostInformers)
	dialer, err := kcpclient.New(cfg.KcpDialer, cfg.Host)
	if err != nil {
		return err
	}
	host.Kcp = kcpclient.NewClients(dialer, host.Secrets)
	host.NoKcpDialer = cfg.KcpDialer == kcpclient.NoDialer
	host.KcpHealth = controller.NewKcpHealth(cfg.KcpHealth)
	inf := controller.Informers{Ours: ourInformers, Kube: kubeInformers, CertManager: hostInformers, References: referenceInformers}
	rootShards, err := rootshard.New(opClient, inf, host, recorder)
	if err != nil {
		return fmt.Errorf("setting up the RootShard controller: %w", err)
	}
	shards, err := shard.New(opClient, inf, host, recorder)
	if err != nil {
		return fmt.Errorf("setting up the Shard controller: %w", err)
	}
	frontProxies, err := frontproxy.New(opClient, inf, host, recorder)
	if err != nil {
		return fmt.Errorf("setting up the FrontProxy controller: %w", err)
	}
	cacheServers, err := cacheserver.New(opClient, inf, host, recorder)
	if err != nil {
		return fmt.Errorf("setting up the CacheServer controller: %w", err)
	}
	kubeconfigs, err := kubeconfig.New(opClient, inf, host, recorder)
	if err != nil {
		return fmt.Errorf("setting up the Kubeconfig controller: %w", err)
	}
	virtualWorkspaces, err := virtualworkspace.New(opClient, inf, host, recorder)
	if err != nil {
		return fmt.Errorf("setting up the VirtualWorkspace controller: %w", err)
	}
	ourInformers.Start(ctx.Done())
	go host.CertManagerAPI.Run(ctx)
	kubeInformers.Start(ctx.Done())
	metadataInformers.Start(ctx.Done())
	referenceInformers.Start(ctx.Done())
	defer ourInformers.Shutdown()
	defer hostInformers.Shutdown()
	defer kubeInformers.Shutdown()
	defer metadataInformers.Shutdown()
	defer referenceInformers.Shutdown()

	workers := cfg.Workers
	if workers < 1 {
		workers = 2
	}
	runs := []func(context.Context, int) error{rootShards.Run, shards.Run, frontProxies.Run, cacheServers.Run, kubeconfigs.Run, virtualWorkspaces.Run}
	errs := make(chan error, len(runs))
	for _, run := range runs {
		go func() { errs <- run(ctx, workers) }()
	}
	var all []error
	for range runs {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}
