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

	"github.com/kcp-setups/apiserver/pkg/controller"
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
		l := namespaced[*corev1.SecretList](&corev1.Secret{}, kube.CoreV1().Secrets)
		return NamespacedInformer(namespaces, l.obj, resync, tweak, l.list, l.watch)
	})
}

// limitInformers makes every informer of the factories list and watch only namespaces,
// each with the factory's selector tweak; with every namespace served it changes nothing.
// It is called before any informer is asked for, since a factory keeps the first informer of
// a type.
func limitInformers(namespaces hostcluster.WatchNamespaces, tweak func(*metav1.ListOptions),
	kube kubernetes.Interface, kubeInformers kubeinformers.SharedInformerFactory,
	certManager cmclientset.Interface, certManagerInformers cminformers.SharedInformerFactory,
	ours clientset.Interface, ourInformers informers.SharedInformerFactory, kinds controller.Registry) {
	if namespaces.All() {
		return
	}
	informer := func(l lw, tweak func(*metav1.ListOptions)) func(time.Duration) cache.SharedIndexInformer {
		return func(resync time.Duration) cache.SharedIndexInformer {
			return NamespacedInformer(namespaces, l.obj, resync, tweak, l.list, l.watch)
		}
	}
	core, apps, policy := kube.CoreV1(), kube.AppsV1(), kube.PolicyV1()
	SecretsInformer(kubeInformers, kube, namespaces, tweak)
	for _, l := range []lw{
		namespaced[*corev1.ConfigMapList](&corev1.ConfigMap{}, core.ConfigMaps),
		namespaced[*corev1.ServiceList](&corev1.Service{}, core.Services),
		namespaced[*appsv1.DeploymentList](&appsv1.Deployment{}, apps.Deployments),
		namespaced[*appsv1.StatefulSetList](&appsv1.StatefulSet{}, apps.StatefulSets),
		namespaced[*policyv1.PodDisruptionBudgetList](&policyv1.PodDisruptionBudget{}, policy.PodDisruptionBudgets),
	} {
		newInformer := informer(l, tweak)
		kubeInformers.InformerFor(l.obj, func(_ kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
			return newInformer(resync)
		})
	}
	cm := certManager.CertmanagerV1()
	for _, l := range []lw{
		namespaced[*cmv1.CertificateList](&cmv1.Certificate{}, cm.Certificates),
		namespaced[*cmv1.IssuerList](&cmv1.Issuer{}, cm.Issuers),
	} {
		newInformer := informer(l, tweak)
		certManagerInformers.InformerFor(l.obj, func(_ cmclientset.Interface, resync time.Duration) cache.SharedIndexInformer {
			return newInformer(resync)
		})
	}
	// Our kinds: objects of a namespace that is not served are left alone.
	for _, k := range kinds {
		obj, list, watchFunc := k.ListWatch(ours)
		newInformer := informer(lw{obj, list, watchFunc}, nil)
		ourInformers.InformerFor(obj, func(_ clientset.Interface, resync time.Duration) cache.SharedIndexInformer {
			return newInformer(resync)
		})
	}
}

// lw is how an informer of obj lists and watches one namespace.
type lw struct {
	obj   runtime.Object
	list  hostcluster.NamespacedList
	watch hostcluster.NamespacedWatch
}

// namespacedClient is a typed client of one namespace's objects, whose list is an L.
type namespacedClient[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// namespaced lists and watches obj through client, a typed client's getter by namespace
// (such as AppsV1().Deployments), whose lists are an L.
func namespaced[L runtime.Object, C namespacedClient[L]](obj runtime.Object, client func(namespace string) C) lw {
	return lw{obj,
		func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
			return client(ns).List(ctx, o)
		},
		func(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
			return client(ns).Watch(ctx, o)
		}}
}

// secretMetadataInformer is the informer of every Secret's metadata over namespaces.
func secretMetadataInformer(namespaces hostcluster.WatchNamespaces, client metadata.Interface, resync time.Duration) cache.SharedIndexInformer {
	secrets := client.Resource(corev1.SchemeGroupVersion.WithResource("secrets"))
	l := namespaced[*metav1.PartialObjectMetadataList](&metav1.PartialObjectMetadata{}, secrets.Namespace)
	return NamespacedInformer(namespaces, l.obj, resync, nil, l.list, l.watch)
}

// certificateRequestInformers is a factory of the LinkIssuer's CertificateRequests alone, over
// namespaces, narrowed by tweak: made once a consumer names a link, so that a server that
// links nothing reads none, and apart from the controllers' cert-manager informers, whose
// sync it does not hold back.
func certificateRequestInformers(namespaces hostcluster.WatchNamespaces, tweak func(*metav1.ListOptions),
	certManager cmclientset.Interface) cminformers.SharedInformerFactory {
	f := cminformers.NewSharedInformerFactoryWithOptions(certManager, resync, cminformers.WithTweakListOptions(tweak))
	if !namespaces.All() {
		l := namespaced[*cmv1.CertificateRequestList](&cmv1.CertificateRequest{}, certManager.CertmanagerV1().CertificateRequests)
		f.InformerFor(l.obj, func(_ cmclientset.Interface, resync time.Duration) cache.SharedIndexInformer {
			return NamespacedInformer(namespaces, l.obj, resync, tweak, l.list, l.watch)
		})
	}
	return f
}
