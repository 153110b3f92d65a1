// Package manager runs the controllers inside the server: it builds the clients and
// informers, elects one leader among the server's replicas on a Lease, and runs every
// kind's controller while leading.
package manager

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
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
	"github.com/kcp-setups/apiserver/pkg/controller/etcdmaint"
	"github.com/kcp-setups/apiserver/pkg/controller/etcdsnapshot"
	"github.com/kcp-setups/apiserver/pkg/controller/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/controller/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/controller/link"
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
	// EtcdDialer names how the controllers reach the managed etcds' members; empty is
	// KcpDialer.
	EtcdDialer string
	// EtcdAgentImage is the server's own image, which runs a managed etcd's backup agent and
	// its members' restore.
	EtcdAgentImage string
	// KcpHealth is how often a ready kcp is asked whether it still is; zero is
	// DefaultKcpHealthInterval.
	KcpHealth time.Duration
	// Status, when set, records why the controllers failed to start: the server's readyz
	// check "controllers".
	Status *Status
	// Namespaces are the namespaces served (--watch-namespaces): the informers of the host
	// and of our kinds hold only their objects. Empty is every namespace.
	Namespaces hostcluster.WatchNamespaces
	// LinkListenerURL is where linked remotes reach this server's link listener
	// (controller.Deps.LinkListenerURL); empty while it serves none.
	LinkListenerURL string
	// MaxKubeconfigValidity bounds the lifetime of a Kubeconfig's certificate
	// (controller.Deps.MaxKubeconfigValidity).
	MaxKubeconfigValidity time.Duration
	// Preview, when set, is handed the controllers' preview of writes once their caches
	// synced, and nil when they stop (docs/kcp-versions.md, "Previewing a change").
	Preview func(PreviewFunc)
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
	ours, err := clientset.NewForConfig(ProtobufConfig(cfg.Loopback))
	if err != nil {
		return err
	}
	certManager, err := cmclientset.NewForConfig(JSONConfig(cfg.Host))
	if err != nil {
		return err
	}
	metadataClient, err := metadata.NewForConfig(cfg.Host)
	if err != nil {
		return err
	}
	f := newFactories(cfg.Namespaces, kube, certManager, ours, metadataClient)
	recorder, err := newRecorder(ctx, events)
	if err != nil {
		return err
	}
	defer recorder.shutdown()
	host, err := newHost(cfg, kube, certManager, metadataClient, f)
	if err != nil {
		return err
	}
	// The remote side of the links this cluster's consumers name (docs/links.md).
	remoteLinks, err := newLinks(cfg.Namespaces, kube, certManager, f, host)
	if err != nil {
		return err
	}
	runs, err := setUp(controller.Deps{Ours: ours, Informers: f.informers(), Host: host, Recorder: recorder.EventRecorder,
		LinkListenerURL: cfg.LinkListenerURL, LinkState: remoteLinks.state, OnLinkStateChange: remoteLinks.onChange,
		LinkDeregister: remoteLinks.deregister, MaxKubeconfigValidity: cfg.MaxKubeconfigValidity})
	if err != nil {
		return err
	}
	defer f.start(ctx, cfg.Namespaces, host)()
	if p := newPreviewer(host, runs); p != nil && cfg.Preview != nil {
		defer cfg.Preview(nil)
		go f.whenSynced(ctx, func() { cfg.Preview(p.Preview) })
	}
	remoteLinks.run(ctx, cfg.Workers)
	started()
	return runAll(ctx, runs, cfg.Workers)
}

// factories are the informer factories of the controllers.
type factories struct {
	// ours are our kinds'; host, cert-manager's objects that the controllers own; kube, the
	// host's objects that the controllers own.
	ours informers.SharedInformerFactory
	host cminformers.SharedInformerFactory
	kube kubeinformers.SharedInformerFactory
	// references caches the reference Secrets' copies that secretRefs name: the users', by
	// their label alone, apart from what the controllers own.
	references kubeinformers.SharedInformerFactory
	// metadata caches every Secret's metadata: the users' Secrets that pods mount carry no
	// label of ours, so that a change to one rolls the pods.
	metadata metadatainformer.SharedInformerFactory
}

// newFactories returns the informer factories over namespaces, their informers narrowed to
// what the controllers read.
func newFactories(namespaces hostcluster.WatchNamespaces, kube kubernetes.Interface, certManager cmclientset.Interface, ours clientset.Interface,
	metadataClient metadata.Interface) factories {
	// Only what the controllers own is cached from the host cluster.
	f := factories{
		ours:       informers.NewSharedInformerFactory(ours, resync),
		host:       cminformers.NewSharedInformerFactoryWithOptions(certManager, resync, cminformers.WithTweakListOptions(owned)),
		kube:       kubeinformers.NewSharedInformerFactoryWithOptions(kube, resync, kubeinformers.WithTweakListOptions(owned)),
		references: kubeinformers.NewSharedInformerFactoryWithOptions(kube, resync, kubeinformers.WithTweakListOptions(hostcluster.ReferenceSecretSelector)),
		metadata:   metadatainformer.NewSharedInformerFactory(metadataClient, resync),
	}
	// Before any informer is asked for: a factory keeps the first informer of a type.
	limitInformers(namespaces, owned, kube, f.kube, certManager, f.host, ours, f.ours, kinds.All)
	SecretsInformer(f.references, kube, namespaces, hostcluster.ReferenceSecretSelector)
	return f
}

// informers are the factories as the controllers watch them.
func (f factories) informers() controller.Informers {
	return controller.Informers{Kinds: kinds.All, Ours: f.ours, Kube: f.kube, CertManager: f.host, References: f.references}
}

// start starts the informers, cert-manager's once its API is served, and returns what shuts
// them down.
func (f factories) start(ctx context.Context, namespaces hostcluster.WatchNamespaces, host *hostcluster.Host) (shutdown func()) {
	f.ours.Start(ctx.Done())
	go host.CertManagerAPI.Run(ctx)
	f.kube.Start(ctx.Done())
	f.metadata.Start(ctx.Done())
	if !namespaces.All() {
		// Not the factory's: started and stopped with the controllers.
		go host.SecretMetadata.RunWithContext(ctx)
	}
	f.references.Start(ctx.Done())
	return func() {
		f.references.Shutdown()
		f.metadata.Shutdown()
		f.kube.Shutdown()
		f.host.Shutdown()
		f.ours.Shutdown()
	}
}

// whenSynced runs f once the caches of our kinds and of the host's objects have synced, the
// ones the controllers plan from; not when ctx ends before.
func (f factories) whenSynced(ctx context.Context, run func()) {
	for _, synced := range []map[reflect.Type]bool{f.ours.WaitForCacheSync(ctx.Done()), f.kube.WaitForCacheSync(ctx.Done())} {
		for _, ok := range synced {
			if !ok {
				return
			}
		}
	}
	run()
}

// recorder records the controllers' Events through the events client.
type recorder struct {
	record.EventRecorder
	shutdown func()
}

func newRecorder(ctx context.Context, events typedcorev1.EventsGetter) (recorder, error) {
	scheme := runtime.NewScheme()
	if err := operatorv1alpha1.AddToScheme(scheme); err != nil {
		return recorder{}, err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: events.Events("")})
	return recorder{EventRecorder: broadcaster.NewRecorder(scheme, corev1.EventSource{Component: pki.ManagedBy}), shutdown: broadcaster.Shutdown}, nil
}

// newHost is the host cluster as the controllers read and write it: through the caches of
// f, clients of their own for the reads before a first write, cert-manager's API as it comes
// and goes, and kcp through the dialer cfg names.
func newHost(cfg Config, kube kubernetes.Interface, certManager cmclientset.Interface, metadataClient metadata.Interface, f factories) (*hostcluster.Host, error) {
	host := hostcluster.NewHost(kube, certManager,
		f.host.Certmanager().V1().Certificates().Lister(), f.host.Certmanager().V1().Issuers().Lister(),
		f.kube.Core().V1().Secrets().Lister(), f.kube.Core().V1().Services().Lister(), f.kube.Apps().V1().Deployments().Lister(),
		f.kube.Core().V1().ConfigMaps().Lister()).
		WithDisruptionBudgets(f.kube.Policy().V1().PodDisruptionBudgets().Lister()).
		WithStatefulSets(f.kube.Apps().V1().StatefulSets().Lister()).
		WithKcpOperatorTakeover()
	// The reads before a first write go through clients with a rate limiter of their own:
	// they are not writes, and would otherwise double a new setup's wait on the writes'.
	claimsConfig := ownClientConfig(cfg.Host, ClaimsUserAgent)
	claimKube, err := kubernetes.NewForConfig(ProtobufConfig(claimsConfig))
	if err != nil {
		return nil, err
	}
	claimCertManager, err := cmclientset.NewForConfig(JSONConfig(claimsConfig))
	if err != nil {
		return nil, err
	}
	host.Claims = &hostcluster.ClaimClients{Kube: claimKube, CertManager: claimCertManager}
	if cfg.Namespaces.All() {
		host.SecretMetadata = f.metadata.ForResource(corev1.SchemeGroupVersion.WithResource("secrets")).Informer()
	} else {
		host.SecretMetadata = secretMetadataInformer(cfg.Namespaces, metadataClient, resync)
	}
	if err := host.SecretMetadata.SetTransform(hostcluster.SecretMetadataTransform); err != nil {
		return nil, fmt.Errorf("the Secret metadata cache: %w", err)
	}
	host.ReferenceSecrets = f.references.Core().V1().Secrets().Lister()
	// cert-manager's informers start once its API is served, which it may never be.
	discoveryClient, err := discovery.NewDiscoveryClientForConfig(cfg.Host)
	if err != nil {
		return nil, err
	}
	host.CertManagerAPI = hostcluster.NewCertManagerAPI(discoveryClient, f.host)
	dialer, err := kcpclient.New(cfg.KcpDialer, cfg.Host)
	if err != nil {
		return nil, err
	}
	etcdDialerName := cmp.Or(cfg.EtcdDialer, cfg.KcpDialer)
	etcdDialer, err := kcpclient.New(etcdDialerName, cfg.Host)
	if err != nil {
		return nil, err
	}
	host.Kcp = kcpclient.NewClients(dialer, host.Secrets).WithEtcdDialer(etcdDialer)
	host.NoKcpDialer = cfg.KcpDialer == kcpclient.NoDialer
	host.NoEtcdDialer = etcdDialerName == kcpclient.NoDialer
	host.EtcdAgentImage = cfg.EtcdAgentImage
	host.KcpHealth = kcphealth.NewPoller(cfg.KcpHealth)
	host.EtcdMaintenance = etcdmaint.NewMaintainer()
	host.EtcdSnapshots = etcdsnapshot.NewRunner()
	return host, nil
}

// controllers are the controllers of our kinds, in the order the manager starts them: the
// registry of kinds' controllers, one line a kind (TestEveryKindHasAController).
var controllers = []controller.Constructor{
	rootshard.New,
	shard.New,
	frontproxy.New,
	cacheserver.New,
	kubeconfig.New,
	virtualworkspace.New,
	link.New,
}

// setUp sets up the controller of every kind over deps.
func setUp(deps controller.Deps) ([]controller.Runner, error) {
	runs := make([]controller.Runner, 0, len(controllers))
	for _, c := range controllers {
		r, err := c.New(deps)
		if err != nil {
			return nil, fmt.Errorf("setting up the %s controller: %w", c.Title, err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// runAll runs the controllers with workers each (2 when less than 1) until ctx is done. A
// controller that stops early stops the others, so that the term ends with nothing running
// rather than with some kinds unreconciled.
func runAll(ctx context.Context, runs []controller.Runner, workers int) error {
	if workers < 1 {
		workers = 2
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	errs := make(chan error, len(runs))
	for _, r := range runs {
		go func() { errs <- r.Run(runCtx, workers) }()
	}
	var all []error
	for range runs {
		err := <-errs
		stop()
		all = append(all, err)
	}
	return errors.Join(all...)
}

// owned narrows the host's informers to what the controllers own.
func owned(o *metav1.ListOptions) { o.LabelSelector = pki.LabelManagedBy + "=" + pki.ManagedBy }
