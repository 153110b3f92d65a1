package controllertest

import (
	"sort"
	"strings"
	"testing"

	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	opfake "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// Watching is what a kind's watches are declared over, for a table test of which keys each
// event enqueues: informer factories that are never started, whose caches the test fills, and
// a host that caches every Secret's metadata.
type Watching struct {
	Informers controller.Informers
	Host      *Host
}

// NewWatching returns informers over empty caches.
func NewWatching(t testing.TB) *Watching {
	w := &Watching{Host: NewHost(t)}
	w.Informers = controller.Informers{
		Kinds:       kinds.All,
		Ours:        informers.NewSharedInformerFactory(opfake.NewSimpleClientset(), 0),
		Kube:        kubeinformers.NewSharedInformerFactory(w.Host.Kube, 0),
		CertManager: cminformers.NewSharedInformerFactory(w.Host.CM, 0),
		References:  kubeinformers.NewSharedInformerFactoryWithOptions(w.Host.Kube, 0, kubeinformers.WithTweakListOptions(hostcluster.ReferenceSecretSelector)),
	}
	w.Host.SecretMetadata = cache.NewSharedIndexInformer(&cache.ListWatch{}, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	return w
}

// Deps are the dependencies of a kind's controller over the informers: our clientset is empty
// and the Events are dropped.
func (w *Watching) Deps() controller.Deps {
	return controller.Deps{Ours: opfake.NewSimpleClientset(), Informers: w.Informers, Host: w.Host.Host, Recorder: record.NewFakeRecorder(10)}
}

// UsersSecrets is the informer of every Secret's metadata, for Source.
const UsersSecrets controller.HostResource = "users-secrets"

// ReferenceCopies is the informer of the copies of reference Secrets (Informers.References),
// for Source.
const ReferenceCopies controller.HostResource = "reference-copies"

// ReferenceCopy is a copy of a reference Secret of kind r named name in namespace, as the
// informer of copies sees it.
func ReferenceCopy(namespace, name string, r reference.Reference) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{reference.Label: string(r)}},
		Type: r.Type()}
}

// Source is the informer of one of our kinds (RootShard, Shard, FrontProxy, CacheServer,
// Kubeconfig, VirtualWorkspace) or of a host resource.
func (w *Watching) Source(t testing.TB, source string) cache.SharedIndexInformer {
	for _, k := range w.Informers.Kinds {
		if k.KindName() == strings.ToLower(source) {
			return k.SharedInformer(w.Informers)
		}
	}
	switch source {
	case string(UsersSecrets):
		return w.Host.SecretMetadata
	case string(ReferenceCopies):
		return w.Informers.References.Core().V1().Secrets().Informer()
	}
	informer, _ := w.Informers.Informer(controller.HostResource(source))
	require.NotNil(t, informer, "no informer for %s", source)
	return informer
}

// Add puts objects of our kinds into their informers' caches.
func (w *Watching) Add(t testing.TB, objs ...controller.Object) {
	for _, o := range objs {
		require.NoError(t, w.Source(t, w.Informers.Kinds.KindOf(o)).GetIndexer().Add(o))
	}
}

// The events of a table test.
const (
	Added   = "add"
	Updated = "update"
	Deleted = "delete"
	// DeletedUnknown is a deletion seen late, as a tombstone.
	DeletedUnknown = "delete-tombstone"
)

// Event is one informer event: on source, of obj (and old, for an update; obj when nil).
type Event struct {
	Source   string
	Type     string
	Obj, Old any
}

// Enqueued fires ev at every handler of watches on its source, and returns the keys it
// enqueued in loop, sorted.
func (w *Watching) Enqueued(t *testing.T, loop *controller.Loop, watches []controller.Watch, ev Event) []string {
	t.Helper()
	require.Zero(t, loop.Queue.Len(), "the queue is drained between events")
	source := w.Source(t, ev.Source)
	for _, watch := range watches {
		// Informer() returns a new handle on the shared informer at each call: the cache
		// tells which informer a handle is of.
		if watch.Informer.GetIndexer() != source.GetIndexer() {
			continue
		}
		switch ev.Type {
		case Added:
			watch.Handler.OnAdd(ev.Obj, false)
		case Updated:
			old := ev.Old
			if old == nil {
				old = ev.Obj
			}
			watch.Handler.OnUpdate(old, ev.Obj)
		case Deleted:
			watch.Handler.OnDelete(ev.Obj)
		case DeletedUnknown:
			key, err := cache.MetaNamespaceKeyFunc(ev.Obj)
			require.NoError(t, err)
			watch.Handler.OnDelete(cache.DeletedFinalStateUnknown{Key: key, Obj: ev.Obj})
		default:
			t.Fatalf("unknown event %q", ev.Type)
		}
	}
	var keys []string
	for loop.Queue.Len() > 0 {
		key, _ := loop.Queue.Get()
		loop.Queue.Done(key)
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

// HostObject is the metadata of a host object in team-a: what the watches map by.
func HostObject(name string, labels map[string]string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, Labels: labels}}
}

// RootShardRef refers to the RootShard name.
func RootShardRef(name string) operatorv1alpha1.RootShardConfig {
	return operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: name}}
}

// WatchCase is a row of a table test of a kind's watches: an event, and exactly the keys it
// enqueues.
type WatchCase struct {
	Name  string
	Event Event
	Want  []string
}

// RunWatchCases runs the rows against the watches of loop.
func (w *Watching) RunWatchCases(t *testing.T, loop *controller.Loop, watches []controller.Watch, cases []WatchCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			want := append([]string(nil), tc.Want...)
			sort.Strings(want)
			assert.Equal(t, want, w.Enqueued(t, loop, watches, tc.Event))
		})
	}
}
