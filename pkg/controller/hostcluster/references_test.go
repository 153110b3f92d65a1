package hostcluster

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// listThenWatch lists, then watches: a fake watch sends no initial events, so the reflector
// must not ask it for a watch list.
type listThenWatch struct{ *cache.ListWatch }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// syncedMetadata is an informer of Secrets' metadata that has listed secrets and synced, as
// the server's cache of every Secret's metadata is.
func syncedMetadata(t *testing.T, secrets ...*corev1.Secret) cache.SharedIndexInformer {
	t.Helper()
	list := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for _, s := range secrets {
		list.Items = append(list.Items, metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: s.ObjectMeta})
	}
	informer := cache.NewSharedIndexInformer(listThenWatch{&cache.ListWatch{
		ListFunc:  func(metav1.ListOptions) (runtime.Object, error) { return list, nil },
		WatchFunc: func(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}}, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	go informer.Run(t.Context().Done())
	require.True(t, cache.WaitForCacheSync(t.Context().Done(), informer.HasSynced))
	return informer
}

// TestResolveReferenceTellsAnUnlabelledCopyFromNone: a secretRef's Secret that the cache of
// copies misses is reported as not labelled when it is there without the label (with the
// command that labels it as r), and as not found otherwise. The cache of every Secret's
// metadata answers once synced, with no request to the host; before that (or without it) a
// GET does, on that failure path alone.
func TestResolveReferenceTellsAnUnlabelledCopyFromNone(t *testing.T) {
	secret := func(labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root-shard-join", ResourceVersion: "1", Labels: labels}}
	}
	unlabelled := secret(map[string]string{"app": "copied-by-hand"})
	labelled := secret(map[string]string{reference.Label: string(reference.ShardJoin)})
	forbidden := func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "root-shard-join", errors.New("no"))
	}
	const notLabelled = "Secret team-a/root-shard-join exists but is not labelled operator.kcp.io/reference, and the server reads only labelled copies: " +
		"kubectl label secret root-shard-join -n team-a operator.kcp.io/reference=shard-join"
	const notFound = "Secret team-a/root-shard-join not found"

	for _, tc := range []struct {
		name string
		// metadata, when set, is the content of a synced cache of every Secret's metadata;
		// host is what a GET finds.
		metadata []*corev1.Secret
		host     []runtime.Object
		// unsynced is a cache of every Secret's metadata that has not synced yet.
		unsynced bool
		// getFails makes the GET forbidden.
		getFails         bool
		wantReason, want string
		wantGet          bool
	}{
		{name: "no Secret, from the metadata cache", metadata: []*corev1.Secret{}, wantReason: operatorv1alpha1.ReasonReferenceSecretNotFound, want: notFound},
		{name: "an unlabelled Secret, from the metadata cache", metadata: []*corev1.Secret{unlabelled},
			wantReason: operatorv1alpha1.ReasonReferenceSecretNotLabelled, want: notLabelled},
		{name: "a labelled Secret the cache of copies has not caught up with", metadata: []*corev1.Secret{labelled},
			wantReason: operatorv1alpha1.ReasonReferenceSecretNotFound, want: notFound},
		{name: "no Secret, by a GET", wantReason: operatorv1alpha1.ReasonReferenceSecretNotFound, want: notFound, wantGet: true},
		{name: "an unlabelled Secret, by a GET", host: []runtime.Object{unlabelled}, wantReason: operatorv1alpha1.ReasonReferenceSecretNotLabelled, want: notLabelled, wantGet: true},
		{name: "a Secret without any label, by a GET", host: []runtime.Object{secret(nil)}, wantReason: operatorv1alpha1.ReasonReferenceSecretNotLabelled, want: notLabelled, wantGet: true},
		{name: "an unlabelled Secret, by a GET before the metadata cache syncs", host: []runtime.Object{unlabelled}, unsynced: true,
			wantReason: operatorv1alpha1.ReasonReferenceSecretNotLabelled, want: notLabelled, wantGet: true},
		{name: "a GET refused: not found, as before", host: []runtime.Object{unlabelled}, getFails: true,
			wantReason: operatorv1alpha1.ReasonReferenceSecretNotFound, want: notFound, wantGet: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube := kubefake.NewSimpleClientset(tc.host...)
			if tc.getFails {
				kube.PrependReactor("get", "secrets", forbidden)
			}
			h := &Host{Kube: kube, ReferenceSecrets: corev1listers.NewSecretLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}))}
			if tc.metadata != nil {
				h.SecretMetadata = syncedMetadata(t, tc.metadata...)
			}
			if tc.unsynced {
				h.SecretMetadata = cache.NewSharedIndexInformer(&cache.ListWatch{}, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
			}
			_, err := h.ResolveReference(t.Context(), "team-a", "root-shard-join", reference.ShardJoin)
			p, ok := ReferenceProblem(err)
			require.True(t, ok, "a *reference.Error: %v", err)
			assert.Equal(t, tc.wantReason, p.Reason)
			assert.Equal(t, tc.want, p.Message)
			if tc.wantReason == operatorv1alpha1.ReasonReferenceSecretNotLabelled {
				assert.ErrorIs(t, err, reference.ErrNotLabelled)
			} else {
				assert.ErrorIs(t, err, reference.ErrNotFound)
			}
			var gets int
			for _, a := range kube.Actions() {
				if a.GetVerb() == "get" {
					gets++
				}
			}
			assert.Equal(t, map[bool]int{false: 0, true: 1}[tc.wantGet], gets, "GETs of the host")
		})
	}
}

// TestResolveReferenceAsksNothingOfALabelledCopy: a copy in the cache of copies is resolved
// from it alone; the host is not asked.
func TestResolveReferenceAsksNothingOfALabelledCopy(t *testing.T) {
	copies := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	require.NoError(t, copies.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root-shard-join",
		Labels: map[string]string{reference.Label: string(reference.ShardJoin)}}, Type: reference.ShardJoin.Type()}))
	kube := kubefake.NewSimpleClientset()
	h := &Host{Kube: kube, ReferenceSecrets: corev1listers.NewSecretLister(copies)}
	_, err := h.ResolveReference(t.Context(), "team-a", "root-shard-join", reference.ShardJoin)
	p, ok := ReferenceProblem(err)
	require.True(t, ok)
	assert.Equal(t, operatorv1alpha1.ReasonReferenceSecretInvalid, p.Reason, "the copy is read (it has no keys)")
	assert.Empty(t, kube.Actions())
}
