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
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	componentbaseconfig "k8s.io/component-base/config"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/controller/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
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
	// Status, when set, records why the controllers failed to start: the server's readyz
	// check "controllers".
	Status *Status
	// Namespaces are the namespaces served (--watch-namespaces): the informers of the host
	// and of our kinds hold only their objects. Empty is every namespace.
	Namespaces hostcluster.WatchNamespaces
}

// DefaultKcpHealthInterval is how often, by default, the controllers ask a ready kcp
// whether it still is.
const DefaultKcpHealthInterval = kcphealth.DefaultInterval

// Run runs the controllers until ctx is done: while leading, or always when leader election
// is off. The controllers, their Events and the lease each have a client and a rate limiter
// of their own, as kube-controller-manager's do.
func Run(ctx context.Context, cfg Config) error {
	kube, err := kubernetes.NewForConfig(ProtobufConfig(cfg.Host))
	if err != nil {
		return err
	}
	events, err := kubernetes.NewForConfig(ProtobufConfig(eventsConfig(cfg.Host)))
	if err != nil {
		return err
	}
	start := func(ctx context.Context, started func()) error {
		return runControllers(ctx, cfg, kube, events.CoreV1(), started)
	}
	if !cfg.LeaderElection.LeaderElect {
		return runAndRecord(ctx, start, cfg.Status)
	}

	host, err := os.Hostname()
	if err != nil {
		return err
	}
	le := cfg.LeaderElection
	election, err := kubernetes.NewForConfig(ProtobufConfig(leaderElectionConfig(cfg.Host, le.RenewDeadline.Duration)))
	if err != nil {
		return err
	}
	identity := host + "_" + string(uuid.NewUUID())
	lock, err := resourcelock.New(le.ResourceLock, le.ResourceNamespace, le.ResourceName,
		election.CoreV1(), election.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: identity})
	if err != nil {
		return err
	}
	(&elector{config: le, lock: lock, start: start, status: cfg.Status}).run(ctx)
	return nil
}

// runControllers runs every kind's controller until ctx is done, and calls started once they
// are set up, before their workers start; an error before that is a failed start. Events
// are recorded through events, apart from the controllers' writes through kube.
func runControllers(ctx context.Context, cfg Config, kube kubernetes.Interface, events typedcorev1.EventsGetter, started func()) error {
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
		kubeinformers.WithTweakListOptions(hostcluster.ReferenceSecretSelector))
	// Before any informer is asked for: a factory keeps the first informer of a type.
	limitInformers(cfg.Namespaces, ours, kube, kubeInformers, certManager, hostInformers, opClient, ourInformers)
	SecretsInformer(referenceInformers, kube, cfg.Namespaces, hostcluster.ReferenceSecretSelector)

	scheme := runtime.NewScheme()
	if err := operatorv1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: events.Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme, corev1.EventSource{Component: pki.ManagedBy})

	// The users' Secrets that pods mount carry no label of ours: their metadata alone is
	// cached, for every Secret, so that a change to one rolls the pods.
	metadataClient, err := metadata.NewForConfig(cfg.Host)
	if err != nil {
		return err
	}
	metadataInformers := metadatainformer.NewSharedInformerFactory(metadataClient, resync)
	host := hostcluster.NewHost(kube, certManager,
		hostInformers.Certmanager().V1().Certificates().Lister(), hostInformers.Certmanager().V1().Issuers().Lister(),
		kubeInformers.Core().V1().Secrets().Lister(), kubeInformers.Core().V1().Services().Lister(), kubeInformers.Apps().V1().Deployments().Lister(),
		kubeInformers.Core().V1().ConfigMaps().Lister()).
		WithDisruptionBudgets(kubeInformers.Policy().V1().PodDisruptionBudgets().Lister()).
		WithStatefulSets(kubeInformers.Apps().V1().StatefulSets().Lister()).
		WithKcpOperatorTakeover()
	// The reads before a first write go through clients with a rate limiter of their own:
	// they are not writes, and would otherwise double a new setup's wait on the writes'.
	claimsConfig := ownClientConfig(cfg.Host, ClaimsUserAgent)
	claimKube, err := kubernetes.NewForConfig(ProtobufConfig(claimsConfig))
	if err != nil {
		return err
	}
	claimCertManager, err := cmclientset.NewForConfig(JSONConfig(claimsConfig))
	if err != nil {
		return err
	}
	host.Claims = &hostcluster.ClaimClients{Kube: claimKube, CertManager: claimCertManager}
	if cfg.Namespaces.All() {
		host.SecretMetadata = metadataInformers.ForResource(corev1.SchemeGroupVersion.WithResource("secrets")).Informer()
	} else {
		host.SecretMetadata = secretMetadataInformer(cfg.Namespaces, metadataClient, resync)
	}
	if err := host.SecretMetadata.SetTransform(hostcluster.SecretMetadataTransform); err != nil {
		return fmt.Errorf("the Secret metadata cache: %w", err)
	}
	host.ReferenceSecrets = referenceInformers.Core().V1().Secrets().Lister()
	// cert-manager's informers start once its API is served, which it may never be.
	discoveryClient, err := discovery.NewDiscoveryClientForConfig(cfg.Host)
	if err != nil {
		return err
	}
	host.CertManagerAPI = hostcluster.NewCertManagerAPI(discoveryClient, hostInformers)
	dialer, err := kcpclient.New(cfg.KcpDialer, cfg.Host)
	if err != nil {
		return err
	}
	host.Kcp = kcpclient.NewClients(dialer, host.Secrets)
	host.NoKcpDialer = cfg.KcpDialer == kcpclient.NoDialer
	host.KcpHealth = kcphealth.NewPoller(cfg.KcpHealth)
	inf := controller.Informers{Ours: ourInformers, Kube: kubeInformers, CertManager: hostInformers, References: referenceInformers}
	deps := controller.Deps{Ours: opClient, Informers: inf, Host: host, Recorder: recorder}
	rootShards, err := rootshard.New(deps)
	if err != nil {
		return fmt.Errorf("setting up the RootShard controller: %w", err)
	}
	shards, err := shard.New(deps)
	if err != nil {
		return fmt.Errorf("setting up the Shard controller: %w", err)
	}
	frontProxies, err := frontproxy.New(deps)
	if err != nil {
		return fmt.Errorf("setting up the FrontProxy controller: %w", err)
	}
	cacheServers, err := cacheserver.New(deps)
	if err != nil {
		return fmt.Errorf("setting up the CacheServer controller: %w", err)
	}
	kubeconfigs, err := kubeconfig.New(deps)
	if err != nil {
		return fmt.Errorf("setting up the Kubeconfig controller: %w", err)
	}
	virtualWorkspaces, err := virtualworkspace.New(deps)
	if err != nil {
		return fmt.Errorf("setting up the VirtualWorkspace controller: %w", err)
	}
	ourInformers.Start(ctx.Done())
	go host.CertManagerAPI.Run(ctx)
	kubeInformers.Start(ctx.Done())
	metadataInformers.Start(ctx.Done())
	if !cfg.Namespaces.All() {
		// Not the factory's: started and stopped with the controllers.
		go host.SecretMetadata.RunWithContext(ctx)
	}
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
	started()
	runs := []func(context.Context, int) error{rootShards.Run, shards.Run, frontProxies.Run, cacheServers.Run, kubeconfigs.Run, virtualWorkspaces.Run}
	// A controller that stops early stops the others, so that the term ends with nothing
	// running rather than with some kinds unreconciled.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	errs := make(chan error, len(runs))
	for _, run := range runs {
		go func() { errs <- run(runCtx, workers) }()
	}
	var all []error
	for range runs {
		err := <-errs
		stop()
		all = append(all, err)
	}
	return errors.Join(all...)
}
