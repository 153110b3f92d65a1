package shard

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	opfake "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	ct "github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/link"
)

// TestLinksEnqueueTheShardsNamingThem: a bootstrap Secret's events, and those of a Secret of
// ours it owns (its bundles Secret), enqueue exactly the Shards whose spec.rootShard.link names
// it, in its namespace; and LinkedBootstraps lists every bootstrap Secret a linked object of
// any kind names, once.
func TestLinksEnqueueTheShardsNamingThem(t *testing.T) {
	w := ct.NewWatching(t)
	deps := w.Deps()
	var linkStateChanged func(namespace, bootstrap string)
	deps.OnLinkStateChange = func(changed func(namespace, bootstrap string)) { linkStateChanged = changed }
	c, err := controller.BuildWatching[Controller](kinds.Shard, deps)
	require.NoError(t, err)
	linked := func(namespace, name, bootstrap string) *operatorv1alpha1.Shard {
		return &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(name + "-uid")},
			Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{Link: &operatorv1alpha1.RootShardLink{
				SecretRef: corev1.LocalObjectReference{Name: bootstrap}}}}}
	}
	copied := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "copied"},
		Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{SecretRef: &corev1.LocalObjectReference{Name: "eu-1-link-bootstrap"}}}}
	fp := &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "edge"},
		Spec: operatorv1alpha1.FrontProxySpec{RootShard: operatorv1alpha1.RootShardConfig{Link: &operatorv1alpha1.RootShardLink{
			SecretRef: corev1.LocalObjectReference{Name: "eu-2-link-bootstrap"}}}}}
	kc := &operatorv1alpha1.Kubeconfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team-c", Name: "admin"},
		Spec: operatorv1alpha1.KubeconfigSpec{Target: operatorv1alpha1.KubeconfigTarget{RootShardLink: &operatorv1alpha1.RootShardLink{
			SecretRef: corev1.LocalObjectReference{Name: "eu-1-link-bootstrap"}}}}}
	w.Add(t, linked("team-a", "eu", "eu-1-link-bootstrap"), linked("team-a", "eu-too", "eu-1-link-bootstrap"),
		linked("team-a", "other", "eu-2-link-bootstrap"), linked("team-b", "elsewhere", "eu-1-link-bootstrap"), copied, fp, kc)

	bootstrap := ct.Event{Source: string(ct.ReferenceCopies), Type: ct.Added, Obj: ct.ReferenceCopy("team-a", "eu-1-link-bootstrap", link.BootstrapRole)}
	bundles := func(owner string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: link.BundlesName(owner)}}
		s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: owner, UID: "u"}}
		return s
	}
	w.RunWatchCases(t, c.Loop, c.Watched.Handlers(c.Loop, w.Host.Host, w.Informers), []ct.WatchCase{
		// The copy named by secretRef is enqueued as a copy, whatever its name.
		{Name: "a bootstrap Secret added", Event: bootstrap, Want: []string{"team-a/copied", "team-a/eu", "team-a/eu-too"}},
		{Name: "its bundles Secret added", Event: ct.Event{Source: string(controller.Secrets), Type: ct.Added, Obj: bundles("eu-1-link-bootstrap")},
			Want: []string{"team-a/eu", "team-a/eu-too"}},
		{Name: "another link's bundles Secret deleted", Event: ct.Event{Source: string(controller.Secrets), Type: ct.Deleted, Obj: bundles("eu-2-link-bootstrap")},
			Want: []string{"team-a/other"}},
		{Name: "a Secret of ours no Secret owns", Event: ct.Event{Source: string(controller.Secrets), Type: ct.Added,
			Obj: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: link.BundlesName("eu-1-link-bootstrap")}}}, Want: nil},
		{Name: "an unlabelled bootstrap Secret", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Added, Obj: ct.HostObject("eu-2-link-bootstrap", nil)},
			Want: []string{"team-a/other"}},
	})

	// The link client saying a link went up or down enqueues the Shards naming it.
	require.NotNil(t, linkStateChanged, "the controller registers for link state changes")
	require.Zero(t, c.Loop.Queue.Len())
	linkStateChanged("team-a", "eu-1-link-bootstrap")
	var keys []string
	for c.Loop.Queue.Len() > 0 {
		k, _ := c.Loop.Queue.Get()
		keys = append(keys, k)
		c.Loop.Queue.Done(k)
	}
	assert.ElementsMatch(t, []string{"team-a/eu", "team-a/eu-too"}, keys)

	assert.Equal(t, []types.NamespacedName{
		{Namespace: "team-a", Name: "eu-1-link-bootstrap"}, {Namespace: "team-a", Name: "eu-2-link-bootstrap"},
		{Namespace: "team-b", Name: "eu-1-link-bootstrap"}, {Namespace: "team-c", Name: "eu-1-link-bootstrap"},
	}, controller.LinkedBootstraps(c.Indexes), "the copy's Secret is no link")

	// The remote issuer's source of linked Shards: by name and UID, through the LinkIndex.
	bootstrapOf := controller.LinkedBootstrapOf(c.Indexes, kinds.Shard.KindName())
	for _, tc := range []struct {
		name string
		uid  types.UID
		want string
		ok   bool
	}{
		{"eu", "eu-uid", "eu-1-link-bootstrap", true},
		{"other", "other-uid", "eu-2-link-bootstrap", true},
		{"eu", "another-uid", "", false},
		{"copied", "", "", false},
		{"missing", "missing-uid", "", false},
	} {
		got, ok, err := bootstrapOf("team-a", tc.name, tc.uid)
		require.NoError(t, err)
		assert.Equal(t, tc.ok, ok, "%s %s", tc.name, tc.uid)
		assert.Equal(t, tc.want, got, "%s %s", tc.name, tc.uid)
	}
}

// TestLinkedObjectsSignalTheirChange: a linked object of any kind added or deleted signals
// the remote link manager, coalesced; an object of a kind that has no link does not.
func TestLinkedObjectsSignalTheirChange(t *testing.T) {
	client := opfake.NewSimpleClientset()
	inf := controller.Informers{Kinds: kinds.All, Ours: informers.NewSharedInformerFactory(client, 0)}
	changed, err := controller.OnLinkedChange(kinds.All, inf)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	inf.Ours.Start(ctx.Done())
	defer func() {
		cancel()
		inf.Ours.Shutdown()
	}()
	signalled := func(d time.Duration) bool {
		select {
		case <-changed:
			return true
		case <-time.After(d):
			return false
		}
	}

	_, err = client.OperatorV1alpha1().RootShards("team-a").Create(t.Context(), &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.False(t, signalled(300*time.Millisecond), "a RootShard has no link")

	kc := &operatorv1alpha1.Kubeconfig{ObjectMeta: metav1.ObjectMeta{Name: "admin"}, Spec: operatorv1alpha1.KubeconfigSpec{
		Target: operatorv1alpha1.KubeconfigTarget{RootShardLink: &operatorv1alpha1.RootShardLink{SecretRef: corev1.LocalObjectReference{Name: "eu-1-link-bootstrap"}}}}}
	_, err = client.OperatorV1alpha1().Kubeconfigs("team-a").Create(t.Context(), kc, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.True(t, signalled(10*time.Second), "a Kubeconfig added")
	require.NoError(t, client.OperatorV1alpha1().Kubeconfigs("team-a").Delete(t.Context(), "admin", metav1.DeleteOptions{}))
	assert.True(t, signalled(10*time.Second), "a Kubeconfig deleted")
}
