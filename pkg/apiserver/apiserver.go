// Package apiserver assembles the kcp-setups API server: it installs the operator.kcp.io
// group on a generic API server. Config → Complete() → New(), as every aggregated server.
package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/manager"
	"github.com/kcp-setups/apiserver/pkg/preview"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/backup"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/kubeconfigrequest"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/link"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/rootshard"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/rotation"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/shard"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/virtualworkspace"
)

// Config is the configuration of the server: the generic server's, plus ours.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	ExtraConfig   ExtraConfig
}

// ExtraConfig is what this server adds to the generic configuration.
type ExtraConfig struct {
	// Scheme and Codecs are the server's types and their serializers.
	Scheme *runtime.Scheme
	Codecs serializer.CodecFactory
	// Controllers configures the controllers that realize setups in the host cluster; nil
	// runs none. Its Loopback is filled in by New.
	Controllers *manager.Config
	// Host reaches the cluster the setups are realized in, where the kubeconfig subresource
	// reads its CAs; nil (only in tests) mints nothing.
	Host *restclient.Config
	// MaxKubeconfigExpiration bounds the lifetime of a minted credential.
	MaxKubeconfigExpiration time.Duration
	// MaxKubeconfigValidity bounds spec.validity of a Kubeconfig; zero is
	// validation.DefaultMaxKubeconfigValidity.
	MaxKubeconfigValidity time.Duration
	// Limits bound what a spec asks for; the zero value is store.DefaultMaxReplicas.
	Limits store.Limits
	// LinkBindAddress is where the link listener listens (docs/links.md); empty, or no
	// Host, serves none.
	LinkBindAddress string
}

// Server is the kcp-setups API server.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
}

type completedConfig struct {
	GenericConfig genericapiserver.CompletedConfig
	ExtraConfig   *ExtraConfig
}

// CompletedConfig is a Config with every default filled in; only Complete makes one.
type CompletedConfig struct {
	*completedConfig
}

// Complete fills in the defaults that depend on other fields.
func (cfg *Config) Complete() CompletedConfig {
	return CompletedConfig{&completedConfig{
		GenericConfig: cfg.GenericConfig.Complete(),
		ExtraConfig:   &cfg.ExtraConfig,
	}}
}

// New returns a server that serves the operator.kcp.io group.
func (c completedConfig) New() (*Server, error) {
	genericServer, err := c.GenericConfig.New("kcp-setups-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}

	scheme, codecs := c.ExtraConfig.Scheme, c.ExtraConfig.Codecs
	apiGroupInfo := genericapiserver.NewDefaultAPIGroupInfo(operator.GroupName, scheme, metav1.ParameterCodec, codecs)
	storage, err := newStorage(scheme, c.GenericConfig.RESTOptionsGetter, c.GenericConfig.Authorization.Authorizer, c.ExtraConfig.Limits,
		kubeconfig.Options{MaxValidity: c.ExtraConfig.MaxKubeconfigValidity})
	if err != nil {
		return nil, err
	}
	// The index of derived names follows the storage once the server serves
	// (store.Claims.Run); until then, the claims are checked by listing.
	if claims := storage["rootshards"].(*store.REST).Claims(); claims != nil {
		genericServer.AddPostStartHookOrDie("kcp-setups-derived-names", func(hookCtx genericapiserver.PostStartHookContext) error {
			claims.Run(hookCtx.Context)
			return nil
		})
	}
	cas, refs, err := c.hostCaches(genericServer)
	if err != nil {
		return nil, err
	}
	resolvers := kubeconfigrequest.Resolvers{Scheme: scheme, References: refs,
		RootShards: storage["rootshards"].(rest.Getter), Shards: storage["shards"].(rest.Getter), FrontProxies: storage["frontproxies"].(rest.Getter)}
	for resource, resolve := range map[string]kubeconfigrequest.Resolver{
		"rootshards":   resolvers.RootShard,
		"shards":       resolvers.Shard,
		"frontproxies": resolvers.FrontProxy,
	} {
		storage[resource+"/kubeconfig"] = &kubeconfigrequest.REST{Resource: operator.Resource(resource), Resolve: resolve, CAs: cas,
			Authorizer: c.GenericConfig.Authorization.Authorizer, MaxExpiration: c.ExtraConfig.MaxKubeconfigExpiration}
	}
	// Only the controllers take their steps of a rotation, and only the server writes what
	// a Link's remote reports (store.ControllerIdentity): they write through the loopback
	// client, as its user.
	loopback, err := loopbackUser(c.GenericConfig.Authentication.Authenticator, c.GenericConfig.LoopbackClientConfig)
	if err != nil {
		return nil, err
	}
	if loopback != nil {
		for path, s := range storage {
			if status, ok := s.(*store.StatusREST); ok && strings.HasSuffix(path, "/status") {
				status.SetController(loopback)
			}
		}
	}
	// The rotation subresource (issue 29) writes the rotations into the status.
	for resource, access := range map[string]rotation.Access{"rootshards": rotation.RootShards, "cacheservers": rotation.CacheServers} {
		storage[resource+"/rotation"] = &rotation.REST{Resource: operator.Resource(resource), Status: storage[resource+"/status"].(rest.Patcher), Access: access}
	}
	storage["rootshards/rotation"].(*rotation.REST).Linked = linkedBy(storage["links"].(rest.Lister))
	// The backup subresource (issue 42) asks for a snapshot of a managed etcd in the status.
	for resource, access := range map[string]backup.Access{"rootshards": backup.RootShards, "shards": backup.Shards} {
		storage[resource+"/"+store.BackupSubresource] = &backup.REST{Resource: operator.Resource(resource), Status: storage[resource+"/status"].(rest.Patcher), Access: access}
	}
	apiGroupInfo.VersionedResourcesStorageMap[operatorv1alpha1.SchemeGroupVersion.Version] = storage

	if err := genericServer.InstallAPIGroup(&apiGroupInfo); err != nil {
		return nil, fmt.Errorf("installing %s: %w", operator.GroupName, err)
	}

	if c.ExtraConfig.LinkBindAddress != "" && c.ExtraConfig.Host != nil {
		if err := c.linkListener(genericServer); err != nil {
			return nil, fmt.Errorf("the link listener: %w", err)
		}
	}
	if c.ExtraConfig.Controllers != nil {
		controllers := *c.ExtraConfig.Controllers
		controllers.Loopback = c.GenericConfig.LoopbackClientConfig
		// Every write of a setup kind answers with what it will do in the host cluster, as
		// the controllers plan it (docs/kcp-versions.md, "Previewing a change").
		controllers.Preview = previewWrites(scheme, storage, loopback)
		// The controllers read our kinds through this server, so they start once it serves;
		// the hook's context ends when the server shuts down.
		genericServer.AddPostStartHookOrDie("start-kcp-setups-controllers", func(hookCtx genericapiserver.PostStartHookContext) error {
			go func() {
				if err := manager.Run(hookCtx.Context, controllers); err != nil {
					klog.FromContext(hookCtx.Context).Error(err, "The controllers stopped")
				}
			}()
			return nil
		})
	}
	return &Server{GenericAPIServer: genericServer}, nil
}

// previewWrites has the setup kinds' endpoints of storage answer their writes with the
// controllers' preview, and returns what binds it once their caches synced: it is given our
// internal objects, which it converts to the version the controllers read.
func previewWrites(scheme *runtime.Scheme, storage map[string]rest.Storage, loopback user.Info) func(manager.PreviewFunc) {
	p := &store.Preview{NotAvailable: preview.NotAvailable}
	if loopback != nil {
		p.SkipFor(loopback)
	}
	for _, resource := range []string{"rootshards", "shards", "frontproxies", "cacheservers", "virtualworkspaces"} {
		storage[resource].(*store.REST).SetPreview(p)
	}
	return func(f manager.PreviewFunc) {
		if f == nil {
			p.Set(nil)
			return
		}
		p.Set(func(ctx context.Context, obj, old runtime.Object, full bool) []string {
			o, err := scheme.ConvertToVersion(obj.DeepCopyObject(), operatorv1alpha1.SchemeGroupVersion)
			if err != nil {
				return []string{preview.Prefix + "not available: " + err.Error()}
			}
			var prev runtime.Object
			if old != nil {
				if prev, err = scheme.ConvertToVersion(old.DeepCopyObject(), operatorv1alpha1.SchemeGroupVersion); err != nil {
					return []string{preview.Prefix + "not available: " + err.Error()}
				}
			}
			return f(ctx, o, prev, full)
		})
	}
}

// loopbackUser is the user a request with the loopback client's token authenticates as: the
// server's own, system:apiserver with a UID the process drew at start, which no client of
// the host cluster can show. It is nil when the server authenticates nobody (the
// integration tier), where every request passes.
func loopbackUser(authn authenticator.Request, loopback *restclient.Config) (user.Info, error) {
	if authn == nil || loopback == nil || loopback.BearerToken == "" {
		return nil, nil
	}
	req := (&http.Request{Header: http.Header{"Authorization": {"Bearer " + loopback.BearerToken}}}).WithContext(context.Background())
	resp, ok, err := authn.AuthenticateRequest(req)
	if err != nil || !ok {
		return nil, fmt.Errorf("the loopback client's token does not authenticate the server's own user: %v", err)
	}
	return resp.User, nil
}

// hostCaches return the caches of the host cluster's Secrets that the kubeconfig
// subresource reads, started once the server runs: the CA Secrets it signs with, and the
// join Secrets a Shard or FrontProxy names in spec.rootShard.secretRef. Every replica keeps
// them, leader or not, because every replica serves the subresource.
func (c completedConfig) hostCaches(server *genericapiserver.GenericAPIServer) (*kubeconfigrequest.CASource, *kubeconfigrequest.ReferenceSource, error) {
	if c.ExtraConfig.Host == nil {
		return nil, nil, nil
	}
	kube, err := kubernetes.NewForConfig(manager.ProtobufConfig(c.ExtraConfig.Host))
	if err != nil {
		return nil, nil, err
	}
	namespaces := hostcluster.WatchNamespaces(c.ExtraConfig.Limits.Namespaces)
	cas, casSynced := secretCache(server, kube, namespaces, "start-kcp-setups-ca-informer", kubeconfigrequest.CASecretsSelector().String())
	refs, refsSynced := secretCache(server, kube, namespaces, "start-kcp-setups-reference-informer", kubeconfigrequest.ReferenceSecretsSelector().String())
	return &kubeconfigrequest.CASource{Secrets: cas, Synced: casSynced},
		&kubeconfigrequest.ReferenceSource{Secrets: refs, Synced: refsSynced}, nil
}

// secretCache is an informer of the host cluster's Secrets that selector selects in
// namespaces (every namespace when empty), started by the post-start hook name. Each cache
// has its own selector, so that no other Secret is kept.
func secretCache(server *genericapiserver.GenericAPIServer, kube kubernetes.Interface, namespaces hostcluster.WatchNamespaces,
	name, selector string) (corev1listers.SecretLister, cache.InformerSynced) {
	tweak := func(o *metav1.ListOptions) { o.LabelSelector = selector }
	factory := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithTweakListOptions(tweak))
	manager.SecretsInformer(factory, kube, namespaces, tweak)
	// Asked for before Start, which starts only the informers asked for.
	secrets := factory.Core().V1().Secrets()
	lister, synced := secrets.Lister(), secrets.Informer().HasSynced
	server.AddPostStartHookOrDie(name, func(hookCtx genericapiserver.PostStartHookContext) error {
		factory.Start(hookCtx.Done())
		go func() {
			<-hookCtx.Done()
			factory.Shutdown()
		}()
		return nil
	})
	return lister, synced
}

// newStorage returns the endpoints of every kind, keyed by resource path.
func newStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, authz authorizer.Authorizer, limits store.Limits,
	kubeconfigs kubeconfig.Options) (map[string]rest.Storage, error) {
	if limits.MaxReplicas == 0 {
		limits.MaxReplicas = store.DefaultMaxReplicas
	}
	storage := map[string]rest.Storage{}
	mains := map[string]*store.REST{}
	for resource, newREST := range map[string]func(*runtime.Scheme, generic.RESTOptionsGetter, authorizer.Authorizer) (*store.REST, *store.StatusREST, error){
		"kubeconfigs":       kubeconfigs.NewREST,
		"rootshards":        rootshard.NewREST,
		"shards":            shard.NewREST,
		"frontproxies":      frontproxy.NewREST,
		"cacheservers":      cacheserver.NewREST,
		"virtualworkspaces": virtualworkspace.NewREST,
		"links":             link.NewREST,
	} {
		main, status, err := newREST(scheme, optsGetter, authz)
		if err != nil {
			return nil, err
		}
		main.SetLimits(limits)
		storage[resource] = main
		storage[resource+"/status"] = status
		mains[resource] = main
	}
	if err := claims(scheme, mains); err != nil {
		return nil, err
	}
	neighbours(scheme, mains, authz)
	return storage, nil
}

// linkedBy reports, from the Links' storage, whether a Link names the RootShard
// namespace/name: the rotation subresource rotates its link CA only then.
func linkedBy(links rest.Lister) func(ctx context.Context, namespace, name string) (bool, error) {
	return func(ctx context.Context, namespace, name string) (bool, error) {
		list, err := links.List(genericapirequest.WithNamespace(ctx, namespace), &metainternalversion.ListOptions{})
		if err != nil {
			return false, err
		}
		l, ok := list.(*operator.LinkList)
		if !ok {
			return false, fmt.Errorf("not a list of Links: %T", list)
		}
		return slices.ContainsFunc(l.Items, func(l operator.Link) bool { return l.Spec.RootShardRef.Name == name }), nil
	}
}
