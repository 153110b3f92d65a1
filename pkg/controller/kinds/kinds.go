// Package kinds describes our kinds to the shared controller code (controller.Kind): a value
// per kind, of closures written for its types (its status, informer, client and the indexes
// it contributes), and All, the one registry of them that the framework and the manager
// iterate. What several kinds share that reads the builders of pkg/resources (the index
// functions, the namespace bootstrap PKI, a managed etcd, the VirtualWorkspace a shard names)
// lives here too, so that the framework package imports none of them.
package kinds

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	typed "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/typed/operator/v1alpha1"
	operatorinformers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
	"github.com/kcp-setups/apiserver/pkg/resources/virtualworkspace"
)

// All are our kinds: describe adds each descriptor below as it is made, so a kind is in the
// registry by being described. Their controllers are the manager's (docs/STYLE.md, "Adding
// a kind").
var All controller.Registry

// The Bases of our kinds' controllers: a kind's Controller embeds its own.
type (
	CacheServerBase      = controller.Base[*operatorv1alpha1.CacheServer, operatorv1alpha1.CacheServerStatus]
	FrontProxyBase       = controller.Base[*operatorv1alpha1.FrontProxy, operatorv1alpha1.FrontProxyStatus]
	RootShardBase        = controller.Base[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus]
	ShardBase            = controller.Base[*operatorv1alpha1.Shard, operatorv1alpha1.ShardStatus]
	VirtualWorkspaceBase = controller.Base[*operatorv1alpha1.VirtualWorkspace, operatorv1alpha1.VirtualWorkspaceStatus]
	KubeconfigBase       = controller.Base[*operatorv1alpha1.Kubeconfig, operatorv1alpha1.KubeconfigStatus]
	LinkBase             = controller.Base[*operatorv1alpha1.Link, operatorv1alpha1.LinkStatus]
)

// The descriptors of our kinds: their names, how their objects and statuses are reached, and
// the indexes they contribute (indexes.go).
var (
	RootShard = describe(rootshard.Kind, "root shard", "RootShard", &operatorv1alpha1.RootShard{}, &operatorv1alpha1.RootShardList{},
		operatorinformers.Interface.RootShards, typed.OperatorV1alpha1Interface.RootShards,
		func(o *operatorv1alpha1.RootShard) *operatorv1alpha1.RootShardStatus { return &o.Status },
		func(s *operatorv1alpha1.RootShardStatus) controller.Common {
			return setup(&s.Phase, &s.ObservedGeneration, &s.Conditions)
		}, rootShardIndexers)
	Shard = describe(shard.Kind, "shard", "Shard", &operatorv1alpha1.Shard{}, &operatorv1alpha1.ShardList{},
		operatorinformers.Interface.Shards, typed.OperatorV1alpha1Interface.Shards,
		func(o *operatorv1alpha1.Shard) *operatorv1alpha1.ShardStatus { return &o.Status },
		func(s *operatorv1alpha1.ShardStatus) controller.Common {
			return setup(&s.Phase, &s.ObservedGeneration, &s.Conditions)
		}, shardIndexers)
	FrontProxy = describe(frontproxy.Kind, "front proxy", "FrontProxy", &operatorv1alpha1.FrontProxy{}, &operatorv1alpha1.FrontProxyList{},
		operatorinformers.Interface.FrontProxies, typed.OperatorV1alpha1Interface.FrontProxies,
		func(o *operatorv1alpha1.FrontProxy) *operatorv1alpha1.FrontProxyStatus { return &o.Status },
		func(s *operatorv1alpha1.FrontProxyStatus) controller.Common {
			return setup(&s.Phase, &s.ObservedGeneration, &s.Conditions)
		}, frontProxyIndexers)
	CacheServer = describe(cacheserver.Kind, "cache server", "CacheServer", &operatorv1alpha1.CacheServer{}, &operatorv1alpha1.CacheServerList{},
		operatorinformers.Interface.CacheServers, typed.OperatorV1alpha1Interface.CacheServers,
		func(o *operatorv1alpha1.CacheServer) *operatorv1alpha1.CacheServerStatus { return &o.Status },
		func(s *operatorv1alpha1.CacheServerStatus) controller.Common {
			return setup(&s.Phase, &s.ObservedGeneration, &s.Conditions)
		}, cacheServerIndexers)
	// Kubeconfig has phases of its own (Provisioning, Ready, Failed), which its reconcile
	// sets: Lifecycle only reads them, for the objects metric.
	Kubeconfig = describe(kubeconfig.Kind, "kubeconfig", "Kubeconfig", &operatorv1alpha1.Kubeconfig{}, &operatorv1alpha1.KubeconfigList{},
		operatorinformers.Interface.Kubeconfigs, typed.OperatorV1alpha1Interface.Kubeconfigs,
		func(o *operatorv1alpha1.Kubeconfig) *operatorv1alpha1.KubeconfigStatus { return &o.Status },
		func(s *operatorv1alpha1.KubeconfigStatus) controller.Common {
			return controller.Common{OwnPhase: func() string { return string(s.Phase) }, ObservedGeneration: &s.ObservedGeneration, Conditions: &s.Conditions}
		}, kubeconfigIndexers)
	VirtualWorkspace = describe(virtualworkspace.Kind, "virtual workspace", "VirtualWorkspace", &operatorv1alpha1.VirtualWorkspace{}, &operatorv1alpha1.VirtualWorkspaceList{},
		operatorinformers.Interface.VirtualWorkspaces,
		typed.OperatorV1alpha1Interface.VirtualWorkspaces,
		func(o *operatorv1alpha1.VirtualWorkspace) *operatorv1alpha1.VirtualWorkspaceStatus { return &o.Status },
		func(s *operatorv1alpha1.VirtualWorkspaceStatus) controller.Common {
			return setup(&s.Phase, &s.ObservedGeneration, &s.Conditions)
		},
		virtualWorkspaceIndexers)
	// Link has no phase: its Ready condition says all (docs/links.md). Lifecycle shows its
	// deletion in Available=False, reason Deleting.
	Link = describe(link.Kind, "link", "Link", &operatorv1alpha1.Link{}, &operatorv1alpha1.LinkList{},
		operatorinformers.Interface.Links, typed.OperatorV1alpha1Interface.Links,
		func(o *operatorv1alpha1.Link) *operatorv1alpha1.LinkStatus { return &o.Status },
		func(s *operatorv1alpha1.LinkStatus) controller.Common {
			return controller.Common{ObservedGeneration: &s.ObservedGeneration, Conditions: &s.Conditions}
		}, linkIndexers)
)

// describe is the Kind, added to All, named name (noun in messages, title as the API spells it) of the
// objects of type T like obj, whose lists are an L, reached through the generated informer and client of their type (method
// expressions), and the closures that point into its status.
func describe[T controller.Object, S any, L runtime.Object, I interface {
	Informer() cache.SharedIndexInformer
}, C interface {
	controller.Client[T]
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}](name, noun, title string, obj T, _ L, informer func(operatorinformers.Interface) I, client func(typed.OperatorV1alpha1Interface, string) C,
	status func(T) *S, common func(*S) controller.Common, indexers cache.Indexers) controller.Kind[T, S] {
	k := controller.Kind[T, S]{Name: name, Noun: noun, Title: title, StatusOf: status, CommonOf: common,
		InformerOf: controller.InformerFrom(informer), ClientOf: controller.ClientFrom[T](client),
		ListWatchOf: controller.ListWatchFrom[L](obj, client), Indexers: indexers}
	All = append(All, k)
	return k
}

// setup are the common fields of a status whose phase is a setup's (Provisioning, Running,
// Deleting), which Lifecycle sets.
func setup(phase *operatorv1alpha1.Phase, generation *int64, conditions *[]metav1.Condition) controller.Common {
	return controller.Common{Phase: phase, ObservedGeneration: generation, Conditions: conditions}
}
