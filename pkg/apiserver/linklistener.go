package apiserver

import (
	"fmt"

	cmclientset "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	genericapiserver "k8s.io/apiserver/pkg/server"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/manager"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	informers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions"
	operatorlisters "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
	"github.com/kcp-setups/apiserver/pkg/link/home"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// linkListener serves the link listener on every replica (docs/links.md), once the server
// runs and until it stops: its own caches of the Links, RootShards and CacheServers (read
// through this server) and of the host Secrets it reads alone (home.SecretsSelector), Events
// on the Links through the host, and signatures through cert-manager's CertificateRequests.
func (c completedConfig) linkListener(server *genericapiserver.GenericAPIServer) error {
	host := c.ExtraConfig.Host
	kube, err := kubernetes.NewForConfig(manager.ProtobufConfig(host))
	if err != nil {
		return err
	}
	certManager, err := cmclientset.NewForConfig(manager.JSONConfig(host))
	if err != nil {
		return err
	}
	ours, err := clientset.NewForConfig(manager.ProtobufConfig(c.GenericConfig.LoopbackClientConfig))
	if err != nil {
		return err
	}
	tweak := func(o *metav1.ListOptions) { o.LabelSelector = home.SecretsSelector().String() }
	kubeFactory := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithTweakListOptions(tweak))
	manager.SecretsInformer(kubeFactory, kube, hostcluster.WatchNamespaces(c.ExtraConfig.Limits.Namespaces), tweak)
	oursFactory := informers.NewSharedInformerFactory(ours, 0)
	secrets := kubeFactory.Core().V1().Secrets()
	operator := oursFactory.Operator().V1alpha1()
	links, rootShards, cacheServers := operator.Links(), operator.RootShards(), operator.CacheServers()
	all := []cache.SharedIndexInformer{secrets.Informer(), links.Informer(), rootShards.Informer(), cacheServers.Informer()}
	registrations, kcpSynced, err := c.linkRegistrations(server, kube, ours, rootShards.Lister())
	if err != nil {
		return err
	}
	cfg := home.Config{
		BindAddress: c.ExtraConfig.LinkBindAddress,
		Links:       links.Lister(), RootShards: rootShards.Lister(), CacheServers: cacheServers.Lister(), Secrets: secrets.Lister(),
		Signer:        home.CertificateRequests{Client: certManager},
		Events:        registrations.Marking(&home.Events{Links: home.OperatorLinks(ours)}),
		Registrations: registrations,
	}
	cfg.Synced = append(cfg.Synced, kcpSynced)
	for _, i := range all {
		cfg.Synced = append(cfg.Synced, i.HasSynced)
	}
	server.AddPostStartHookOrDie("start-kcp-setups-link-listener", func(hookCtx genericapiserver.PostStartHookContext) error {
		ctx := hookCtx.Context
		recorder, shutdown, err := manager.NewEventRecorder(ctx, host)
		if err != nil {
			return fmt.Errorf("the link listener's Events: %w", err)
		}
		cfg.Recorder = recorder
		listener := home.New(cfg)
		for _, i := range all {
			if _, err := i.AddEventHandler(listener.EventHandler()); err != nil {
				shutdown()
				return err
			}
		}
		kubeFactory.Start(ctx.Done())
		oursFactory.Start(ctx.Done())
		go func() {
			defer shutdown()
			defer oursFactory.Shutdown()
			defer kubeFactory.Shutdown()
			if err := listener.Run(ctx); err != nil && ctx.Err() == nil {
				klog.FromContext(ctx).Error(err, "The link listener stopped")
			}
		}()
		return nil
	})
	return nil
}

// linkRegistrations are the listener's home.Registrations: the Links' status through this
// server, and kcp's Shard objects of each RootShard through the controllers' kcp dialer, as
// the server's own identity, read from a cache of the host Secrets that holds it and the
// kcp servers' serving certificates alone.
func (c completedConfig) linkRegistrations(server *genericapiserver.GenericAPIServer, kube kubernetes.Interface, ours clientset.Interface,
	rootShards operatorlisters.RootShardLister) (*home.Registrations, cache.InformerSynced, error) {
	dialerName := kcpclient.NoDialer
	if c.ExtraConfig.Controllers != nil && c.ExtraConfig.Controllers.KcpDialer != "" {
		dialerName = c.ExtraConfig.Controllers.KcpDialer
	}
	dialer, err := kcpclient.New(dialerName, c.ExtraConfig.Host)
	if err != nil {
		return nil, nil, err
	}
	managed, _ := labels.NewRequirement(pki.LabelManagedBy, selection.Equals, []string{pki.ManagedBy})
	component, _ := labels.NewRequirement(pki.LabelComponent, selection.In, []string{pki.OperatorRole, "server"})
	secrets, synced := secretCache(server, kube, hostcluster.WatchNamespaces(c.ExtraConfig.Limits.Namespaces), "start-kcp-setups-link-kcp-informer",
		labels.NewSelector().Add(*managed, *component).String())
	return &home.Registrations{Links: home.OperatorLinks(ours), Kcp: home.KcpRootShards(kcpclient.NewClients(dialer, secrets), rootShards)}, synced, nil
}
