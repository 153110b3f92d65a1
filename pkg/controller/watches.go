package controller

import (
	"fmt"

	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	informers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions"
)

// Informers are the informer factories the controllers watch: our kinds, the host cluster's
// objects the controllers own, and cert-manager's, which start only once its API is served.
type Informers struct {
	// Kinds are our kinds (kinds.All), whose informers Ours holds.
	Kinds       Registry
	Ours        informers.SharedInformerFactory
	Kube        kubeinformers.SharedInformerFactory
	CertManager cminformers.SharedInformerFactory
	// References caches the reference Secrets and their copies (ReferenceSecretSelector),
	// whoever wrote them; ReferenceSecrets is its Secret informer.
	References kubeinformers.SharedInformerFactory
}

// HostResource is a resource of the host cluster the controllers own objects of.
type HostResource string

// The host resources a kind's Watches may name.
const (
	Secrets           HostResource = "secrets"
	ConfigMaps        HostResource = "configmaps"
	Services          HostResource = "services"
	Deployments       HostResource = "deployments"
	DisruptionBudgets HostResource = "poddisruptionbudgets"
	StatefulSets      HostResource = "statefulsets"
	// Certificates and Issuers are cert-manager's, watched once its API is served.
	Certificates HostResource = "certificates"
	Issuers      HostResource = "issuers"
	// ReferenceSecrets are the Secrets labelled operator.kcp.io/reference, the users' copies
	// included (Informers.References).
	ReferenceSecrets HostResource = "reference-secrets"
)

// Informer is the informer of a host resource, and whether it is cert-manager's.
func (i Informers) Informer(r HostResource) (informer cache.SharedIndexInformer, certManager bool) {
	switch r {
	case Secrets:
		return i.Kube.Core().V1().Secrets().Informer(), false
	case ConfigMaps:
		return i.Kube.Core().V1().ConfigMaps().Informer(), false
	case Services:
		return i.Kube.Core().V1().Services().Informer(), false
	case Deployments:
		return i.Kube.Apps().V1().Deployments().Informer(), false
	case DisruptionBudgets:
		return i.Kube.Policy().V1().PodDisruptionBudgets().Informer(), false
	case StatefulSets:
		return i.Kube.Apps().V1().StatefulSets().Informer(), false
	case Certificates:
		return i.CertManager.Certmanager().V1().Certificates().Informer(), true
	case Issuers:
		return i.CertManager.Certmanager().V1().Issuers().Informer(), true
	case ReferenceSecrets:
		return i.References.Core().V1().Secrets().Informer(), false
	}
	return nil, false
}

// Reference is one of our kinds, by its descriptor (kinds.Shard), and the keys of the
// objects its objects concern: those that refer to them, or that they refer to.
type Reference struct {
	Kind Described
	Keys func(metav1.Object) []string
	// Membership enqueues on additions and deletions only (MembershipHandler): for what
	// depends on which objects exist, not on what they hold.
	Membership bool
}

// Watches declares what a kind's controller watches, and which of its objects' keys each
// event enqueues. A kind's controller declares them and its sync; Register does the rest.
type Watches struct {
	// Own is the kind's informer: an event enqueues its object; cert-manager's API coming
	// or going enqueues every object, since nothing else would bring them back.
	Own cache.SharedIndexInformer
	// Kinds are the events of our kinds that concern other objects of the kind.
	Kinds []Reference
	// Host are the host resources whose events enqueue their owner, the object of the kind
	// their owner label names, and what Users adds: what the kind owns, and what it uses of
	// what others own.
	Host []HostResource
	// Users are the keys of the other objects of the kind a host object concerns: those that
	// use what another object owns, or that share what it is made of; nil for none.
	Users func(metav1.Object) []string
	// Mounting are the keys of the objects of a namespace whose pods mount a user's Secret,
	// or whose bundles are made of it, so that its change rolls them. It is watched when the
	// host caches every Secret's metadata. Base.Watch makes it the objects that name the
	// Secret in the kind's UsersSecretIndex when the kind has that index and Mounting is nil.
	Mounting func(namespace, name string) []string
	// Referencing are the keys of the objects of a namespace whose secretRef names the
	// reference Secret name, so that its copy appearing, changing or going brings them back,
	// and a Secret of that name without the reference label too, when the host caches every
	// Secret's metadata (UnlabelledCopyHandler). Base.Watch makes it the objects that name the
	// Secret in the kind's ReferenceSecretIndex when the kind has that index and Referencing
	// is nil.
	Referencing func(namespace, name string) []string
	// Linking are the keys of the objects of a namespace joined over the link of the
	// bootstrap Secret name, so that the bootstrap Secret (a reference Secret) and its bundles
	// Secret (ours, owned by it) appearing, changing or going bring them back. Base.Watch
	// makes it the objects that name the Secret in the kind's LinkIndex when the kind has
	// that index and Linking is nil.
	Linking func(namespace, bootstrap string) []string
}

// Owners are the keys of the objects of kind a host object concerns: its owner, which its
// owner label names, and its Users.
func (w Watches) Owners(kind string) func(metav1.Object) []string {
	return func(m metav1.Object) []string {
		keys := OwnerKey(m, kind)
		if w.Users == nil {
			return keys
		}
		return append(keys, w.Users(m)...)
	}
}

// Handlers are the informers the watches add handlers to, with the handlers of loop.
func (w Watches) Handlers(loop *Loop, host *hostcluster.Host, inf Informers) []Watch {
	watches := []Watch{{Informer: w.Own, Handler: loop.Handler()}}
	owners := w.Owners(loop.Kind)
	for _, ref := range w.Kinds {
		handler := loop.HandlerFor(ref.Keys)
		if ref.Membership {
			handler = loop.MembershipHandler(ref.Keys)
		}
		watches = append(watches, Watch{Informer: ref.Kind.SharedInformer(inf), Handler: handler})
	}
	for _, r := range w.Host {
		informer, certManager := inf.Informer(r)
		watches = append(watches, Watch{Informer: informer, Handler: loop.HandlerFor(owners), certManager: certManager})
	}
	if w.Referencing != nil {
		informer, _ := inf.Informer(ReferenceSecrets)
		watches = append(watches, Watch{Informer: informer, Handler: loop.HandlerFor(func(m metav1.Object) []string {
			return w.Referencing(m.GetNamespace(), m.GetName())
		})})
	}
	if w.Referencing != nil && host.SecretMetadata != nil {
		// What the informer of copies does not see: a Secret of a secretRef's name without
		// the label, so that its status says so (ReferenceSecretNotLabelled) and not that it
		// is not found.
		watches = append(watches, Watch{Informer: host.SecretMetadata, Handler: loop.UnlabelledCopyHandler(w.Referencing)})
	}
	if w.Linking != nil {
		watches = append(watches, w.linkingWatches(loop, host, inf)...)
	}
	if w.Mounting != nil && host.SecretMetadata != nil {
		watches = append(watches, Watch{Informer: host.SecretMetadata, Handler: loop.HandlerFor(func(m metav1.Object) []string {
			if !hostcluster.UsersSecret(m) {
				return nil
			}
			return w.Mounting(m.GetNamespace(), m.GetName())
		})})
	}
	return watches
}

// Register adds the watches' handlers to their informers. The loop waits for their caches,
// except cert-manager's, which sync only once cert-manager is installed: for those it waits
// for the tracker's first answer.
func (w Watches) Register(loop *Loop, host *hostcluster.Host, inf Informers) error {
	certManager := false
	for _, watch := range w.Handlers(loop, host, inf) {
		if !watch.certManager {
			if err := loop.Watch(watch.Informer, watch.Handler); err != nil {
				return err
			}
			continue
		}
		if _, err := watch.Informer.AddEventHandler(watch.Handler); err != nil {
			return fmt.Errorf("%s: watching cert-manager: %w", loop.Kind, err)
		}
		certManager = true
	}
	if !certManager {
		return nil
	}
	loop.synced = append(loop.synced, host.CertManagerAPI.Known)
	host.CertManagerAPI.OnChange(func() {
		for _, obj := range w.Own.GetStore().List() {
			loop.Enqueue(obj)
		}
	})
	return nil
}
