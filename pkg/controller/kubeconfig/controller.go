// Package kubeconfig realizes declared Kubeconfigs in the host cluster: a cert-manager
// Certificate of the declared identity, signed by the target RootShard's front-proxy-client
// CA, and, once it is issued, the Secret spec.secretRef.name with a kubeconfig file toward
// the target. When cert-manager renews the certificate, the Secret is written again. It
// reports back through status.
package kubeconfig

import (
	"context"

	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	informers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions"
	listers "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// Finalizer keeps a Kubeconfig until what the controller created for it is gone.
const Finalizer = "operator.kcp.io/kubeconfig-cleanup"

// Controller reconciles Kubeconfigs.
type Controller struct {
	loop *controller.Loop

	client       clientset.Interface
	kubeconfigs  listers.KubeconfigLister
	rootShards   listers.RootShardLister
	shards       listers.ShardLister
	frontProxies listers.FrontProxyLister
	host         *controller.Host
	recorder     record.EventRecorder
}

// New returns a Kubeconfig controller reading our kinds from ours, and the host cluster's
// objects through host, whose caches come from the informer factories kubeHosts and hosts.
func New(client clientset.Interface, ours informers.SharedInformerFactory, host *controller.Host,
	kubeHosts kubeinformers.SharedInformerFactory, hosts cminformers.SharedInformerFactory, recorder record.EventRecorder) (*Controller, error) {
	ops := ours.Operator().V1alpha1()
	c := &Controller{
		client:       client,
		kubeconfigs:  ops.Kubeconfigs().Lister(),
		rootShards:   ops.RootShards().Lister(),
		shards:       ops.Shards().Lister(),
		frontProxies: ops.FrontProxies().Lister(),
		host:         host,
		recorder:     recorder,
	}
	c.loop = controller.NewLoop(kubeconfig.Kind, c.sync)
	if err := c.loop.WatchAll(
		controller.On(ops.Kubeconfigs().Informer(), c.loop.Handler()),
		// A target that appears heals ReferenceValid; one that changes changes the kubeconfig.
		controller.On(ops.RootShards().Informer(), c.loop.HandlerFor(func(m metav1.Object) []string { return c.ofRootShard(m.GetNamespace(), m.GetName()) })),
		controller.On(ops.Shards().Informer(), c.loop.HandlerFor(func(m metav1.Object) []string {
			return c.targeting(m.GetNamespace(), kubeconfig.ShardTarget, m.GetName())
		})),
		controller.On(ops.FrontProxies().Informer(), c.loop.HandlerFor(func(m metav1.Object) []string {
			return c.targeting(m.GetNamespace(), kubeconfig.FrontProxyTarget, m.GetName())
		})),
		// cert-manager's Secret, issued and renewed, and the kubeconfig Secret; and the
		// RootShard's server CA bundle that every kubeconfig of it trusts.
		controller.On(kubeHosts.Core().V1().Secrets().Informer(), c.loop.HandlerFor(c.owners)),
	); err != nil {
		return nil, err
	}
	// cert-manager's objects, once its API is served; and every object again when it comes.
	cm := hosts.Certmanager().V1()
	if err := host.WatchCertManager(c.loop, ops.Kubeconfigs().Informer(), c.owners, cm.Certificates().Informer()); err != nil {
		return nil, err
	}
	return c, nil
}

// Run reconciles with workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	return c.loop.Run(ctx, workers)
}

// owners are the Kubeconfigs a host object concerns: its owner, or, for a RootShard's merged
// CA bundle, every Kubeconfig toward that RootShard or its Shards and FrontProxies.
func (c *Controller) owners(m metav1.Object) []string {
	if name := m.GetLabels()[pki.OwnerLabel(kubeconfig.Kind)]; name != "" {
		return []string{m.GetNamespace() + "/" + name}
	}
	if rs := m.GetLabels()[pki.OwnerLabel(rootshard.Kind)]; rs != "" &&
		m.GetName() == rootshard.MergedCABundleName(&operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: rs}}) {
		return c.ofRootShard(m.GetNamespace(), rs)
	}
	// A FrontProxy's own CA bundle, which the Kubeconfigs toward it trust.
	if fp := m.GetLabels()[pki.OwnerLabel(frontproxy.Kind)]; fp != "" && m.GetLabels()[pki.LabelComponent] == "merged-ca-bundle" {
		return c.targeting(m.GetNamespace(), kubeconfig.FrontProxyTarget, fp)
	}
	return nil
}

// targeting are the keys of the Kubeconfigs of a namespace whose target is kind/name.
func (c *Controller) targeting(namespace, kind, name string) []string {
	return c.matching(namespace, func(k, n string) bool { return k == kind && n == name })
}

// ofRootShard are the keys of the Kubeconfigs whose credentials a RootShard signs: toward
// the RootShard itself, or toward one of its Shards or FrontProxies.
func (c *Controller) ofRootShard(namespace, rootShard string) []string {
	return c.matching(namespace, func(kind, name string) bool {
		switch kind {
		case kubeconfig.RootShardTarget:
			return name == rootShard
		case kubeconfig.ShardTarget:
			s, err := c.shards.Shards(namespace).Get(name)
			return err == nil && refersTo(s.Spec.RootShard, rootShard)
		case kubeconfig.FrontProxyTarget:
			fp, err := c.frontProxies.FrontProxies(namespace).Get(name)
			return err == nil && refersTo(fp.Spec.RootShard, rootShard)
		}
		return false
	})
}

// matching are the keys of the Kubeconfigs of a namespace whose target matches.
func (c *Controller) matching(namespace string, match func(kind, name string) bool) []string {
	all, err := c.kubeconfigs.Kubeconfigs(namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []string
	for _, kc := range all {
		if match(kubeconfig.TargetRef(kc)) {
			keys = append(keys, kc.Namespace+"/"+kc.Name)
		}
	}
	return keys
}

// refersTo reports whether a Shard's or FrontProxy's rootShard names rootShard.
func refersTo(ref operatorv1alpha1.RootShardConfig, rootShard string) bool {
	return ref.Reference != nil && ref.Reference.Name == rootShard
}
