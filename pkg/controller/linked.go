package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
)

// LinkStateFunc says whether the link of the bootstrap Secret namespace/bootstrap is up (its
// stream connected), and if not, why, as a condition's reason and message.
type LinkStateFunc func(namespace, bootstrap string) (connected bool, reason, message string)

// LinkDeregisterFunc asks the home of the link of the bootstrap Secret namespace/bootstrap to
// delete kcp's Shard object of the linked Shard namespace/name of uid, being deleted
// (docs/talking-to-kcp.md): nil once kcp has it no more.
type LinkDeregisterFunc func(ctx context.Context, namespace, bootstrap, name, uid string) error

// SetLinkReady sets the LinkReady condition of an object joined over the link of the
// bootstrap Secret bootstrap, from LinkState: Unknown while this server runs no link client.
// It changes nothing else: a link that is down keeps what was realized from the bundles last
// received.
func (l Lifecycle[T, S]) SetLinkReady(obj T, status *S, bootstrap string) {
	if l.LinkState == nil {
		l.SetCondition(obj, status, operatorv1alpha1.ConditionConsumerLinkReady, metav1.ConditionUnknown, operatorv1alpha1.ReasonLinkStateUnknown,
			fmt.Sprintf("this server runs no client of the link of the bootstrap Secret %s", bootstrap))
		return
	}
	connected, reason, message := l.LinkState(obj.GetNamespace(), bootstrap)
	s := metav1.ConditionFalse
	if connected {
		s = metav1.ConditionTrue
	}
	l.SetCondition(obj, status, operatorv1alpha1.ConditionConsumerLinkReady, s, reason, message)
}

// SetLinkedRootShard sets the RootShard condition of a Shard or FrontProxy joined over the
// link of the bootstrap Secret bootstrap: whether what the link received is usable (err is
// Host.JoinLinked's).
func (l Lifecycle[T, S]) SetLinkedRootShard(obj T, status *S, bootstrap string, err error) {
	if err != nil {
		l.SetRootShard(obj, status, false, fmt.Sprintf("the link of the bootstrap Secret %q is not usable: %v", bootstrap, err))
		return
	}
	l.SetRootShard(obj, status, true, fmt.Sprintf("RootShard reference is valid: the RootShard of the link of the bootstrap Secret %q", bootstrap))
}

// Linked reconciles an object joined over the link of the bootstrap Secret bootstrap: it sets
// LinkReady, and when join (Host.JoinLinked's result) failed with a problem of the link's
// Secrets, ReferenceValid=False with its reason (ReferenceSecretNotFound,
// ReferenceSecretInvalid, LinkBundlesNotReceived) and message. ok is whether realize may go
// on; otherwise err is the error to retry, or nil. Nothing is realized or removed while it
// may not: what the last bundles realized stays.
func (l Lifecycle[T, S]) Linked(obj T, status *S, bootstrap string, joinErr error) (ok bool, err error) {
	l.SetLinkReady(obj, status, bootstrap)
	if joinErr == nil {
		return true, nil
	}
	return false, l.ReferenceInvalid(obj, status, joinErr)
}

// LinkedBootstraps are the bootstrap Secrets some linked object of indexes names, sorted and
// each once: the links this server must hold (the remote link manager's list).
func LinkedBootstraps(indexes Indexes) []types.NamespacedName {
	seen := map[string]bool{}
	for _, objects := range indexes {
		if objects == nil {
			continue
		}
		if _, ok := objects.GetIndexers()[LinkIndex]; !ok {
			continue
		}
		for _, v := range objects.ListIndexFuncValues(LinkIndex) {
			if len(Keys(objects, LinkIndex, v)) > 0 {
				seen[v] = true
			}
		}
	}
	out := make([]types.NamespacedName, 0, len(seen))
	for v := range seen {
		ns, name, _ := strings.Cut(v, "/")
		out = append(out, types.NamespacedName{Namespace: ns, Name: name})
	}
	slices.SortFunc(out, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// linkingWatches are the watches of Linking: a bootstrap Secret's events (in the cache of
// reference Secrets, and without the label in the cache of every Secret's metadata), and the
// events of a Secret of ours owned by a Secret (a bootstrap's bundles Secret), each enqueueing
// the objects that name the bootstrap.
func (w Watches) linkingWatches(loop *Loop, host *hostcluster.Host, inf Informers) []Watch {
	references, _ := inf.Informer(ReferenceSecrets)
	secrets, _ := inf.Informer(Secrets)
	watches := []Watch{
		{Informer: references, Handler: loop.HandlerFor(func(m metav1.Object) []string { return w.Linking(m.GetNamespace(), m.GetName()) })},
		{Informer: secrets, Handler: loop.HandlerFor(func(m metav1.Object) []string {
			if owner := ownerSecret(m); owner != "" {
				return w.Linking(m.GetNamespace(), owner)
			}
			return nil
		})},
	}
	if host.SecretMetadata != nil {
		watches = append(watches, Watch{Informer: host.SecretMetadata, Handler: loop.UnlabelledCopyHandler(w.Linking)})
	}
	return watches
}

// ownerSecret is the name of the Secret that owns m, if one does.
func ownerSecret(m metav1.Object) string {
	for _, o := range m.GetOwnerReferences() {
		if o.APIVersion == "v1" && o.Kind == "Secret" {
			return o.Name
		}
	}
	return ""
}

// LinkedBootstrapOf is, for the objects of kind (its name in owner labels) in indexes, the
// bootstrap Secret the object namespace/name of that UID is linked by: ok is false when no
// such object exists (or another of that name, by UID) or it names no link. It reads the
// kind's LinkIndex, so it needs no knowledge of the kind's fields: the remote issuer's source
// of a consumer kind.
func LinkedBootstrapOf(indexes Indexes, kind string) func(namespace, name string, uid types.UID) (string, bool, error) {
	return func(namespace, name string, uid types.UID) (string, bool, error) {
		objects := indexes[kind]
		if objects == nil {
			return "", false, nil
		}
		linkOf, ok := objects.GetIndexers()[LinkIndex]
		if !ok {
			return "", false, nil
		}
		obj, exists, err := objects.GetByKey(namespace + "/" + name)
		if err != nil || !exists {
			return "", false, err
		}
		m, err := meta.Accessor(obj)
		if err != nil || m.GetUID() != uid {
			return "", false, err
		}
		values, err := linkOf(obj)
		if err != nil || len(values) == 0 {
			return "", false, err
		}
		_, bootstrap, _ := strings.Cut(values[0], "/")
		return bootstrap, true, nil
	}
}

// OnLinkedChange signals, without blocking and coalesced, whenever an object of a kind of
// registry that has a LinkIndex is added or deleted (a link is immutable, so an update changes
// no link): the remote link manager's signal to read LinkedBootstraps again.
func OnLinkedChange(registry Registry, inf Informers) (<-chan struct{}, error) {
	changed := make(chan struct{}, 1)
	signal := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	handler := cache.ResourceEventHandlerFuncs{AddFunc: signal, DeleteFunc: signal}
	for _, k := range registry {
		if _, ok := k.IndexersOf()[LinkIndex]; !ok {
			continue
		}
		if _, err := k.SharedInformer(inf).AddEventHandler(handler); err != nil {
			return nil, fmt.Errorf("%s: watching linked objects: %w", k.KindName(), err)
		}
	}
	return changed, nil
}
