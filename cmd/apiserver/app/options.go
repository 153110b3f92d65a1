// Package app is the kcp-setups-apiserver command: its flags, their validation, and Run.
package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	utilcompatibility "k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	componentbaseconfig "k8s.io/component-base/config"
	componentbaseoptions "k8s.io/component-base/config/options"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
	"github.com/kcp-setups/apiserver/pkg/apiserver"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/manager"
	"github.com/kcp-setups/apiserver/pkg/embeddedetcd"
	generatedopenapi "github.com/kcp-setups/apiserver/pkg/generated/openapi"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/kubeconfigrequest"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// etcdPrefix is where objects live in etcd, so that the server can share an etcd cluster.
const etcdPrefix = "/kcp-setups"

// Options is the command line of the server.
type Options struct {
	RecommendedOptions *genericoptions.RecommendedOptions
	// EmbeddedEtcdDir is where the embedded etcd keeps its data when --etcd-servers is empty.
	EmbeddedEtcdDir string
	// LeaderElection elects the one replica that runs the controllers.
	LeaderElection componentbaseconfig.LeaderElectionConfiguration
	// ControllerWorkers is the number of concurrent reconciles per kind.
	ControllerWorkers int
	// MaxKubeconfigExpiration bounds the lifetime of a credential the kubeconfig
	// subresource mints.
	MaxKubeconfigExpiration time.Duration
	// MaxKubeconfigValidity bounds spec.validity of a Kubeconfig object.
	MaxKubeconfigValidity time.Duration
	// MaxReplicas bounds spec.replicas of every component.
	MaxReplicas int32
	// KcpDialer is how the controllers reach the kcp servers they realize
	// (kcpclient.Dialers).
	KcpDialer string
	// EtcdDialer is how the controllers reach the members of the managed etcds they realize
	// (kcpclient.Dialers); empty is KcpDialer.
	EtcdDialer string
	// EtcdAgentImage is the server's own image, which runs a managed etcd's backup agent and
	// its members' restore.
	EtcdAgentImage string
	// KcpHealthInterval is how often the controllers ask a ready kcp whether it still is.
	KcpHealthInterval time.Duration
	// WatchNamespaces are the namespaces served, comma-separated; empty is every namespace.
	WatchNamespaces string
	// ShutdownWatchTerminationGracePeriod is how long the server lets the watches open at
	// shutdown drain once it has ended them; without it, an open watch (kube-apiserver
	// proxies every client's) holds the shutdown for the whole request timeout.
	ShutdownWatchTerminationGracePeriod time.Duration
	// KubeAPIQPS and KubeAPIBurst bound the requests to the host cluster's kube-apiserver,
	// as kube-scheduler's flags of the same names do. client-go's own default (5, 10) would
	// make a RootShard's 29 writes take five seconds.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// LinkBindAddress is the host:port of the link listener (docs/links.md); empty serves
	// none.
	LinkBindAddress string
	// LinkAdvertiseURL is the https URL linked remotes dial to reach the listener; empty
	// derives it from LinkBindAddress when that names a host.
	LinkAdvertiseURL string

	scheme *runtime.Scheme
	codecs serializer.CodecFactory
}

// NewOptions returns the options with their defaults.
func NewOptions() *Options {
	scheme := apiserver.NewScheme()
	codecs := apiserver.NewCodecs(scheme)
	o := &Options{
		RecommendedOptions: genericoptions.NewRecommendedOptions(etcdPrefix,
			codecs.LegacyCodec(operatorv1alpha1.SchemeGroupVersion)),
		EmbeddedEtcdDir: "_output/etcd",
		LeaderElection: componentbaseconfig.LeaderElectionConfiguration{
			LeaderElect:       true,
			LeaseDuration:     metav1.Duration{Duration: 15 * time.Second},
			RenewDeadline:     metav1.Duration{Duration: 10 * time.Second},
			RetryPeriod:       metav1.Duration{Duration: 2 * time.Second},
			ResourceLock:      resourcelock.LeasesResourceLock,
			ResourceName:      "kcp-setups-controllers",
			ResourceNamespace: metav1.NamespaceSystem,
		},
		ControllerWorkers:                   4,
		MaxKubeconfigExpiration:             kubeconfigrequest.DefaultMaxExpiration,
		MaxKubeconfigValidity:               validation.DefaultMaxKubeconfigValidity,
		MaxReplicas:                         store.DefaultMaxReplicas,
		KcpDialer:                           kcpclient.ServiceDNSDialer,
		KcpHealthInterval:                   manager.DefaultKcpHealthInterval,
		ShutdownWatchTerminationGracePeriod: 5 * time.Second,
		KubeAPIQPS:                          50,
		KubeAPIBurst:                        100,
		scheme:                              scheme,
		codecs:                              codecs,
	}
	etcd := o.RecommendedOptions.Etcd
	etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(operatorv1alpha1.SchemeGroupVersion,
		schema.GroupKind{Group: operatorv1alpha1.GroupName})
	// Stored as protobuf, as kube-apiserver stores its kinds (applyStorageMediaType).
	etcd.DefaultStorageMediaType = runtime.ContentTypeProtobuf
	o.RecommendedOptions.SecureServing.BindPort = 6443
	// A generated serving certificate stays in memory unless --cert-dir is given.
	o.RecommendedOptions.SecureServing.ServerCert.CertDirectory = ""
	return o
}

// AddFlags adds every flag of the server to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.RecommendedOptions.AddFlags(fs)
	fs.StringVar(&o.EmbeddedEtcdDir, "embedded-etcd-dir", o.EmbeddedEtcdDir,
		"The directory of the embedded etcd, which runs when --etcd-servers is empty. It holds the data and, in pki/, the certificates without which no client but this server gets in.")
	fs.IntVar(&o.ControllerWorkers, "controller-workers", o.ControllerWorkers,
		"The number of objects of one kind reconciled at the same time.")
	fs.DurationVar(&o.MaxKubeconfigExpiration, "max-kubeconfig-expiration", o.MaxKubeconfigExpiration,
		"The longest lifetime of a credential minted by the kubeconfig subresource; longer requests are shortened to it, with a warning.")
	fs.DurationVar(&o.MaxKubeconfigValidity, "max-kubeconfig-validity", o.MaxKubeconfigValidity,
		"The longest lifetime of a Kubeconfig object's certificate; a longer spec.validity is accepted with a warning and issued for this instead. The certificate is renewed for as long as the Kubeconfig exists, so this bounds how long a leaked copy stays good.")
	fs.Int32Var(&o.MaxReplicas, "max-replicas", o.MaxReplicas,
		"The largest spec.replicas a RootShard, Shard, FrontProxy, CacheServer or VirtualWorkspace may ask for; a larger one is refused with a 422 (an update that keeps the count is not).")
	fs.StringVar(&o.KcpDialer, "kcp-dialer", o.KcpDialer,
		"How the controllers reach the kcp servers they realize: "+kcpclient.ServiceDNSDialer+" (the Services' cluster DNS names, for a server "+
			"running in the host cluster) or "+kcpclient.PortForwardDialer+" (port-forward through the host's kube-apiserver to a ready pod, for "+
			"a server running outside it; needs get/list pods and create pods/portforward in the setups' namespaces) or "+kcpclient.NoDialer+
			" (no kcp can be reached, as on a host whose pods run nothing: KcpReady and a managed etcd's EtcdReady are Unknown with reason "+
			operatorv1alpha1.ReasonNoKcpDialer+", and deleting a Shard or a Kubeconfig does not wait for kcp).")
	fs.StringVar(&o.EtcdDialer, "etcd-dialer", o.EtcdDialer,
		"How the controllers reach the members of the managed etcds they realize (EtcdReady asks their /health): one of --kcp-dialer's values; "+
			"empty (the default) is --kcp-dialer's. `make run` runs --kcp-dialer="+kcpclient.NoDialer+" --etcd-dialer="+kcpclient.PortForwardDialer+
			": its local stack runs a managed etcd's members, and no kcp.")
	fs.StringVar(&o.EtcdAgentImage, "etcd-agent-image", o.EtcdAgentImage,
		"The server's own image (repository and tag or digest), which runs a managed etcd's backup agent and its members' restore "+
			"(`kcp-setups-apiserver etcd-agent`); the chart and the install manifests set it. Empty, a managed etcd's backup and restore "+
			"are not realized, and say so in their condition.")
	fs.StringVar(&o.WatchNamespaces, "watch-namespaces", o.WatchNamespaces,
		"The namespaces of the host cluster the server serves, comma-separated; empty serves every namespace. The server caches Secrets, "+
			"Services, Deployments, StatefulSets, ConfigMaps, disruption budgets, cert-manager's objects and its own kinds of these namespaces "+
			"only, and refuses (403) to create its kinds in any other; its RBAC may then be Roles in these namespaces.")
	fs.DurationVar(&o.KcpHealthInterval, "kcp-health-interval", o.KcpHealthInterval,
		"How often the controllers ask each RootShard's and Shard's kcp for its readiness (the KcpReady condition).")
	fs.DurationVar(&o.ShutdownWatchTerminationGracePeriod, "shutdown-watch-termination-grace-period", o.ShutdownWatchTerminationGracePeriod,
		"On shutdown, the server ends every open watch and waits at most this long for them to drain; 0 leaves them open until the request timeout.")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS,
		"The sustained rate of requests per second of each of the server's clients of the host cluster's kube-apiserver (built-in kinds, cert-manager); APF still applies on the host's side.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst,
		"The burst of requests to the host cluster's kube-apiserver above --kube-api-qps.")
	fs.StringVar(&o.LinkBindAddress, "link-bind-address", o.LinkBindAddress,
		"The host:port on which the server serves the link listener to linked remotes (mutual TLS, docs/links.md), on every replica; empty serves none, "+
			"and the Links' bootstrap Secrets wait for it.")
	fs.StringVar(&o.LinkAdvertiseURL, "link-advertise-url", o.LinkAdvertiseURL,
		"The https URL at which linked remotes reach the link listener, written into every Link's bootstrap Secret (a Service or load balancer in front of "+
			"--link-bind-address, passing TLS through). Required when --link-bind-address names no host (0.0.0.0, ::, or none); else https://<--link-bind-address>.")
	componentbaseoptions.BindLeaderElectionFlags(&o.LeaderElection, fs)
}

// embeddedEtcd says whether the server runs its own etcd.
func (o *Options) embeddedEtcd() bool {
	return len(o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList) == 0
}

// Validate checks the flags.
func (o *Options) Validate() error {
	var errs []error
	for _, err := range o.RecommendedOptions.Validate() {
		// An empty --etcd-servers means the embedded etcd, whose URL is filled in by Run.
		if o.embeddedEtcd() && err.Error() == "--etcd-servers must be specified" {
			continue
		}
		errs = append(errs, err)
	}
	if o.MaxKubeconfigExpiration < 10*time.Minute {
		errs = append(errs, fmt.Errorf("--max-kubeconfig-expiration must be at least 10m, the shortest lifetime a request may ask for, not %s", o.MaxKubeconfigExpiration))
	}
	if o.MaxKubeconfigValidity < time.Hour {
		errs = append(errs, fmt.Errorf("--max-kubeconfig-validity must be at least 1h, the shortest validity cert-manager issues, not %s", o.MaxKubeconfigValidity))
	}
	if o.MaxReplicas < 1 {
		errs = append(errs, fmt.Errorf("--max-replicas must be at least 1, not %d", o.MaxReplicas))
	}
	if !slices.Contains(kcpclient.Dialers, o.KcpDialer) {
		errs = append(errs, fmt.Errorf("--kcp-dialer must be one of %s, not %q", strings.Join(kcpclient.Dialers, ", "), o.KcpDialer))
	}
	if o.EtcdDialer != "" && !slices.Contains(kcpclient.Dialers, o.EtcdDialer) {
		errs = append(errs, fmt.Errorf("--etcd-dialer must be empty or one of %s, not %q", strings.Join(kcpclient.Dialers, ", "), o.EtcdDialer))
	}
	if _, err := hostcluster.ParseWatchNamespaces(o.WatchNamespaces); err != nil {
		errs = append(errs, err)
	}
	if o.ShutdownWatchTerminationGracePeriod < 0 {
		errs = append(errs, fmt.Errorf("--shutdown-watch-termination-grace-period must not be negative, not %s", o.ShutdownWatchTerminationGracePeriod))
	}
	if o.KubeAPIQPS <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps must be positive, not %v", o.KubeAPIQPS))
	}
	if o.KubeAPIBurst < 1 || float32(o.KubeAPIBurst) < o.KubeAPIQPS {
		errs = append(errs, fmt.Errorf("--kube-api-burst must be at least 1 and at least --kube-api-qps (%v), not %d", o.KubeAPIQPS, o.KubeAPIBurst))
	}
	if o.KcpHealthInterval < time.Second {
		errs = append(errs, fmt.Errorf("--kcp-health-interval must be at least 1s, not %s", o.KcpHealthInterval))
	}
	if o.embeddedEtcd() && o.EmbeddedEtcdDir == "" {
		errs = append(errs, errors.New("--embedded-etcd-dir must be set when --etcd-servers is empty"))
	}
	if _, err := linkListenerURL(o.LinkBindAddress, o.LinkAdvertiseURL); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, validateLeaderElection(o.LeaderElection)...)
	return utilerrors.NewAggregate(errs)
}

// validateLeaderElection checks the --leader-elect-* flags as leaderelection.NewLeaderElector
// does, which would otherwise panic inside RunOrDie once the server runs: each duration
// positive, the lease longer than the renew deadline, and the renew deadline longer than the
// retry period with its jitter (a renewal is tried every retry period, up to 1.2 times it).
func validateLeaderElection(le componentbaseconfig.LeaderElectionConfiguration) []error {
	if !le.LeaderElect {
		return nil
	}
	var errs []error
	lease, renew, retry := le.LeaseDuration.Duration, le.RenewDeadline.Duration, le.RetryPeriod.Duration
	for _, d := range []struct {
		flag  string
		value time.Duration
	}{
		{"--leader-elect-lease-duration", lease},
		{"--leader-elect-renew-deadline", renew},
		{"--leader-elect-retry-period", retry},
	} {
		if d.value <= 0 {
			errs = append(errs, fmt.Errorf("%s must be greater than zero, not %s", d.flag, d.value))
		}
	}
	// The durations are compared only when each is positive.
	if len(errs) == 0 {
		if lease <= renew {
			errs = append(errs, fmt.Errorf("--leader-elect-lease-duration (%s) must be greater than --leader-elect-renew-deadline (%s)", lease, renew))
		}
		if jittered := time.Duration(leaderelection.JitterFactor * float64(retry)); renew <= jittered {
			errs = append(errs, fmt.Errorf("--leader-elect-renew-deadline (%s) must be greater than --leader-elect-retry-period (%s) times its jitter factor %v (%s)",
				renew, retry, leaderelection.JitterFactor, jittered))
		}
	}
	if le.ResourceLock != resourcelock.LeasesResourceLock {
		errs = append(errs, fmt.Errorf("--leader-elect-resource-lock must be %q, not %q", resourcelock.LeasesResourceLock, le.ResourceLock))
	}
	if le.ResourceName == "" {
		errs = append(errs, errors.New("--leader-elect-resource-name must be set"))
	}
	if le.ResourceNamespace == "" {
		errs = append(errs, errors.New("--leader-elect-resource-namespace must be set"))
	}
	return errs
}

// Config turns the options into the server's configuration.
func (o *Options) Config() (*apiserver.Config, error) {
	if err := o.RecommendedOptions.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil,
		[]net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("creating a self-signed serving certificate: %w", err)
	}

	serverConfig := genericapiserver.NewRecommendedConfig(o.codecs)
	serverConfig.EffectiveVersion = utilcompatibility.DefaultBuildEffectiveVersion()

	namer := openapi.NewDefinitionNamer(o.scheme)
	serverConfig.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	serverConfig.OpenAPIConfig.Info.Title = "kcp-setups"
	serverConfig.OpenAPIConfig.Info.Version = operatorv1alpha1.SchemeGroupVersion.Version
	serverConfig.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	serverConfig.OpenAPIV3Config.Info.Title = "kcp-setups"
	serverConfig.OpenAPIV3Config.Info.Version = operatorv1alpha1.SchemeGroupVersion.Version

	if err := o.applyStorageMediaType(); err != nil {
		return nil, err
	}
	if err := provideClientCA(o.RecommendedOptions.Authentication); err != nil {
		return nil, err
	}
	if err := o.RecommendedOptions.ApplyTo(serverConfig); err != nil {
		return nil, err
	}
	// Every request's client certificate, kube-apiserver's proxy's included, is verified
	// once per certificate and CA bundle rather than once per request.
	if authn := o.RecommendedOptions.Authentication; authn != nil && serverConfig.Authentication.Authenticator != nil {
		serverConfig.Authentication.Authenticator = apiserver.WithCertificateVerifier(serverConfig.Authentication.Authenticator,
			&apiserver.CertificateVerifier{}, authn.ClientCert.CAContentProvider, serverConfig.Authentication.RequestHeaderConfig)
	}
	serverConfig.ShutdownWatchTerminationGracePeriod = o.ShutdownWatchTerminationGracePeriod
	serverConfig.AddReadyzChecks(apiserver.AuthenticationReady(clientCA(serverConfig), requestHeaderCA(serverConfig)))
	namespaces, err := hostcluster.ParseWatchNamespaces(o.WatchNamespaces)
	if err != nil {
		return nil, err
	}
	linkURL, err := linkListenerURL(o.LinkBindAddress, o.LinkAdvertiseURL)
	if err != nil {
		return nil, err
	}
	extra := apiserver.ExtraConfig{Scheme: o.scheme, Codecs: o.codecs, MaxKubeconfigExpiration: o.MaxKubeconfigExpiration,
		MaxKubeconfigValidity: o.MaxKubeconfigValidity, Limits: store.Limits{MaxReplicas: o.MaxReplicas, Namespaces: namespaces},
		LinkBindAddress: o.LinkBindAddress}
	// The host cluster is the one of --kubeconfig, or the one the server runs in; without
	// either (only in tests) no controller runs.
	if serverConfig.ClientConfig != nil {
		host := o.hostConfig(serverConfig.ClientConfig)
		extra.Host = rest.CopyConfig(host)
		// /readyz/controllers fails, naming the error, while this replica's controllers
		// failed to start (the lease is released meanwhile).
		status := manager.NewStatus()
		serverConfig.AddReadyzChecks(status)
		extra.Controllers = &manager.Config{
			Host:           host,
			LeaderElection: o.LeaderElection,
			Workers:        o.ControllerWorkers,
			KcpDialer:      o.KcpDialer,
			EtcdDialer:     o.EtcdDialer,
			EtcdAgentImage: o.EtcdAgentImage,
			KcpHealth:      o.KcpHealthInterval,
			Status:         status,
			Namespaces:     namespaces,
			// Set once the listener is served: the Links' bootstrap Secrets say where it is.
			LinkListenerURL:       linkURL,
			MaxKubeconfigValidity: o.MaxKubeconfigValidity,
		}
	}
	return &apiserver.Config{GenericConfig: serverConfig, ExtraConfig: extra}, nil
}

// hostConfig is a copy of the host cluster's client configuration with the --kube-api-*
// rate limit.
func (o *Options) hostConfig(c *rest.Config) *rest.Config {
	host := rest.CopyConfig(c)
	host.QPS, host.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	return host
}

// Run validates the options, starts the embedded etcd when needed, then serves until ctx is
// done, then stops everything it started.
func (o *Options) Run(ctx context.Context) error {
	if err := o.Validate(); err != nil {
		return err
	}
	return o.run(ctx)
}

// run is Run on validated options.
func (o *Options) run(ctx context.Context) error {
	if o.embeddedEtcd() {
		etcd, err := embeddedetcd.Start(ctx, o.EmbeddedEtcdDir)
		if err != nil {
			return err
		}
		// The server's storage must be gone before etcd stops, which RunWithContext ensures.
		defer etcd.Close()
		// Its URL and the client certificate it alone accepts.
		etcd.ApplyTo(&o.RecommendedOptions.Etcd.StorageConfig.Transport)
	}

	config, err := o.Config()
	if err != nil {
		return err
	}
	server, err := config.Complete().New()
	if err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Serving operator.kcp.io", "port", o.RecommendedOptions.SecureServing.BindPort)
	return server.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}

// clientCA is the CA the server verifies client certificates by, if any.
func clientCA(c *genericapiserver.RecommendedConfig) dynamiccertificates.CAContentProvider {
	if c.SecureServing == nil {
		return nil
	}
	return c.SecureServing.ClientCA
}

// requestHeaderCA is the CA the server verifies an authenticating proxy by, if any.
func requestHeaderCA(c *genericapiserver.RecommendedConfig) dynamiccertificates.CAContentProvider {
	if c.Authentication.RequestHeaderConfig == nil {
		return nil
	}
	return c.Authentication.RequestHeaderConfig.CAContentProvider
}
