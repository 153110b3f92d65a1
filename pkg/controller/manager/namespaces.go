package manager

import (
	"context"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmclientset "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned"
	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
	informers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions"
)

// NamespacedInformer is an informer of obj over namespaces, its list and watch narrowed by
// tweak (a label selector), as a factory's informer would be.
func NamespacedInformer(namespaces hostcluster.WatchNamespaces, obj runtime.Object, resync time.Duration, tweak func(*metav1.ListOptions),
	list hostcluster.NamespacedList, watchFunc hostcluster.NamespacedWatch) cache.SharedIndexInformer {
	lw := namespaces.ListWatch(
		func(ctx context.Context, ns string, opts metav1.ListOptions) (runtime.Object, error) {
			if tweak != nil {
				tweak(&opts)
			}
			return list(ctx, ns, opts)
		},
		func(ctx context.Context, ns string, opts metav1.ListOptions) (watch.Interface, error) {
			if tweak != nil {
				tweak(&opts)
			}
			return watchFunc(ctx, ns, opts)
		})
	return cache.NewSharedIndexInformer(lw, obj, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

// SecretsInformer is the informer of the host's Secrets that tweak selects, over namespaces:
// the factory's own informer when every namespace is served.
func SecretsInformer(factory kubeinformers.SharedInformerFactory, kube kubernetes.Interface, namespaces hostcluster.WatchNamespaces,
	tweak func(*metav1.ListOptions)) {
	if namespaces.All() {
		return
	}
	factory.InformerFor(&corev1.Secret{}, func(_ kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return NamespacedInformer(namespaces, &corev1.Secret{}, resync, tweak,
			func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
				return kube.CoreV1().Secrets(ns).List(ctx, o)
			},
			func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
				return kube.CoreV1().Secrets(ns).Watch(ctx, o)
			})
	})
}

// limitInformers makes every informer of the factories list and watch only namespaces,
// each with the factory's selector tweak; with every namespace served it changes nothing.
// It is called before any informer is asked for, since a factory keeps the first informer of
// a type.
func limitInformers(namespaces hostcluster.WatchNamespaces, tweak func(*metav1.ListOptions),
	kube kubernetes.Interface, kubeInformers kubeinformers.SharedInformerFactory,
	certManager cmclientset.Interface, certManagerInformers cminformers.SharedInformerFactory,
	ours clientset.Interface, ourInformers informers.SharedInformerFactory) {
	if namespaces.All() {
		return
	}
	type lw struct {
		obj   runtime.Object
		list  hostcluster.NamespacedList
		watch hostcluster.NamespacedWatch
	}
	informer := func(l lw, tweak func(*metav1.ListOptions)) func(time.Duration) cache.SharedIndexInformer {
		return func(resync time.Duration) cache.SharedIndexInformer {
			return NamespacedInformer(namespaces, l.obj, resync, tweak, l.list, l.watch)
		}
	}
	core, apps, policy := kube.CoreV1(), kube.AppsV1(), kube.PolicyV1()
	SecretsInformer(kubeInformers, kube, namespaces, tweak)
	for _, l := range []lw{
		{&corev1.ConfigMap{},
			func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
				return core.ConfigMaps(ns).List(ctx, o)
			},
			func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
				return core.ConfigMaps(ns).Watch(ctx, o)
			}},
		{&corev1.Service{},
			func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
				return core.Services(ns).List(ctx, o)
			},
			func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
				return core.Services(ns).Watch(ctx, o)
			}},
		{&appsv1.Deployment{},
			func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
				return apps.Deployments(ns).List(ctx, o)
			},
			func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
				return apps.Deployments(ns).Watch(ctx, o)
			}},
		{&appsv1.StatefulSet{},
			func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
				return apps.StatefulSets(ns).List(ctx, o)
			},
			func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
				return apps.StatefulSets(ns).Watch(ctx, o)
			}},
		{&policyv1.PodDisruptionBudget{},
			func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
				return policy.PodDisruptionBudgets(ns).List(ctx, o)
			},
			func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
				return policy.PodDisruptionBudgets(ns).Watch(ctx, o)
			}},
	} {
		newInformer := informer(l, tweak)
		kubeInformers.InformerFor(l.obj, func(_ kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
			return newInformer(resync)
		})
	}
	cm := certManager.CertmanagerV1()
	for _, l := range []lw{
		{&cmv1.Certificate{},
			func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
				return cm.Certificates(ns).List(ctx, o)
			},
			func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
				return cm.Certificates(ns).Watch(ctx, o)
			}},
		{&cmv1.Issuer{},
			func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
				return cm.Issuers(ns).List(ctx, o)
			},
			func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
				return cm.Issuers(ns).Watch(ctx, o)
			}},
	} {
		newInformer := informer(l, tweak)
		certManagerInformers.InformerFor(l.obj, func(_ cmclientset.Interface, resync time.Duration) cache.SharedIndexInformer {
			return newInformer(resync)
		})
	}
	// Our kinds: objects of a namespace that is not served are left alone.
	op := ours.OperatorV1alpha1()
	for _, l := range []lw{
		{&operatorv1alpha1.RootShard{},
			func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
				return op.RootShards(ns).List(ctx, o)
			},
			func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
				return op.RootShards(ns).Watch(ctx, o)
			}},
		{&operatorv1alpha1.Shard{},
			func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
				return op.Shards(ns).List(ctx, o)
			},
			func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
				return op.Shards(ns).Watch(ctx, o)
			}},
		{&operatorv1alpha1.FrontProxy{},
			func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
				return op.FrontProxies(ns).List(ctx, o)
			},
			func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
				return op.FrontProxies(ns).Watch(ctx, o)
			}},
		{&operatorv1alpha1.CacheServer{},
			func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
				return op.CacheServers(ns).List(ctx, o)
			},
			func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
				return op.CacheServers(ns).Watch(ctx, o)
			}},
		{&operatorv1alpha1.VirtualWorkspace{},
			func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
				return op.VirtualWorkspaces(ns).List(ctx, o)
			},
			func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
				return op.VirtualWorkspaces(ns).Watch(ctx, o)
			}},
		{&operatorv1alpha1.Kubeconfig{},
			func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
				return op.Kubeconfigs(ns).List(ctx, o)
			},
			func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
				return op.Kubeconfigs(ns).Watch(ctx, o)
			}},
	} {
		newInformer := informer(l, nil)
		ourInformers.InformerFor(l.obj, func(_ clientset.Interface, resync time.Duration) cache.SharedIndexInformer {
			return newInformer(resync)
		})
	}
}

// secretMetadataInformer is the informer of every Secret's metadata over namespaces.
func secretMetadataInformer(namespaces hostcluster.WatchNamespaces, client metadata.Interface, resync time.Duration) cache.SharedIndexInformer {
	secrets := client.Resource(corev1.SchemeGroupVersion.WithResource("secrets"))
	return NamespacedInformer(namespaces, &metav1.PartialObjectMetadata{}, resync, nil,
		func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
			return secrets.Namespace(ns).List(ctx, o)
		},
		func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
			return secrets.Namespace(ns).Watch(ctx, o)
		})
}
