package shard

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	ct "github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// TestWatchesEnqueueTheShardsConcerned: every event a Shard's controller watches enqueues
// exactly the Shards it concerns.
func TestWatchesEnqueueTheShardsConcerned(t *testing.T) {
	w := ct.NewWatching(t)
	c, err := controller.BuildWatching[Controller](kinds.Shard, w.Deps())
	require.NoError(t, err)
	shardOf := func(name, rs string) *operatorv1alpha1.Shard {
		return &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name},
			Spec: operatorv1alpha1.ShardSpec{RootShard: ct.RootShardRef(rs)}}
	}
	s1, s2, elsewhere := shardOf("shard-1", "root"), shardOf("shard-2", "root"), shardOf("elsewhere", "other-root")
	s1.Spec.CABundleSecretRef = &corev1.LocalObjectReference{Name: "partner-ca"}
	s2.Spec.KcpVirtualWorkspace = &corev1.LocalObjectReference{Name: "shard-2-vw"}
	root := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root"}}
	w.Add(t, root, s1, s2, elsewhere)
	all := []string{"team-a/elsewhere", "team-a/shard-1", "team-a/shard-2"}

	w.RunWatchCases(t, c.Loop, c.Watched.Handlers(c.Loop, w.Host.Host, w.Informers), []ct.WatchCase{
		{Name: "a Shard added, and its siblings", Event: ct.Event{Source: "Shard", Type: ct.Added, Obj: s1}, Want: []string{"team-a/shard-1", "team-a/shard-2"}},
		{Name: "a Shard updated: itself alone", Event: ct.Event{Source: "Shard", Type: ct.Updated, Obj: s1}, Want: []string{"team-a/shard-1"}},
		{Name: "a Shard deleted, seen late, and its siblings", Event: ct.Event{Source: "Shard", Type: ct.DeletedUnknown, Obj: s2}, Want: []string{"team-a/shard-1", "team-a/shard-2"}},
		{Name: "the VirtualWorkspace a Shard names", Event: ct.Event{Source: "VirtualWorkspace", Type: ct.Added,
			Obj: &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shard-2-vw"}}}, Want: []string{"team-a/shard-2"}},
		{Name: "a VirtualWorkspace no Shard names", Event: ct.Event{Source: "VirtualWorkspace", Type: ct.Deleted,
			Obj: &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shard-1-vw"}}}, Want: nil},
		{Name: "a RootShard: its Shards", Event: ct.Event{Source: "RootShard", Type: ct.Updated, Obj: root}, Want: []string{"team-a/shard-1", "team-a/shard-2"}},
		{Name: "a CacheServer: every Shard", Event: ct.Event{Source: "CacheServer", Type: ct.Added,
			Obj: &operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "cache"}}}, Want: all},
		{Name: "its Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("shard-1-server", pki.Labels("shard", "shard-1", "server"))}, Want: []string{"team-a/shard-1"}},
		{Name: "its service-account Secret, and its siblings", Event: ct.Event{Source: "secrets", Type: ct.Updated,
			Obj: ct.HostObject("shard-1-service-account", pki.Labels("shard", "shard-1", "service-account"))}, Want: []string{"team-a/shard-1", "team-a/shard-2"}},
		{Name: "its Service", Event: ct.Event{Source: "services", Type: ct.Added, Obj: ct.HostObject("shard-1", pki.Labels("shard", "shard-1", "server"))}, Want: []string{"team-a/shard-1"}},
		{Name: "its Deployment", Event: ct.Event{Source: "deployments", Type: ct.Updated, Obj: ct.HostObject("shard-1", pki.Labels("shard", "shard-1", "server"))}, Want: []string{"team-a/shard-1"}},
		{Name: "its PodDisruptionBudget", Event: ct.Event{Source: "poddisruptionbudgets", Type: ct.Deleted, Obj: ct.HostObject("shard-1", pki.Labels("shard", "shard-1", "server"))}, Want: []string{"team-a/shard-1"}},
		{Name: "its Certificate", Event: ct.Event{Source: "certificates", Type: ct.Updated, Obj: ct.HostObject("shard-1-server", pki.Labels("shard", "shard-1", "server"))}, Want: []string{"team-a/shard-1"}},
		{Name: "an Issuer is not watched", Event: ct.Event{Source: "issuers", Type: ct.Added, Obj: ct.HostObject("shard-1", pki.Labels("shard", "shard-1", "server"))}, Want: nil},
		{Name: "a ConfigMap is not watched", Event: ct.Event{Source: "configmaps", Type: ct.Added, Obj: ct.HostObject("shard-1", pki.Labels("shard", "shard-1", "server"))}, Want: nil},
		{Name: "its RootShard's Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("root-ca", pki.Labels("rootshard", "root", "ca"))}, Want: []string{"team-a/shard-1", "team-a/shard-2"}},
		{Name: "a CacheServer's Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("cache-kubeconfig", pki.Labels("cacheserver", "cache", "kubeconfig"))}, Want: all},
		{Name: "a FrontProxy's Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("edge-server", pki.Labels("frontproxy", "edge", "server"))}, Want: nil},
		{Name: "a user's Secret its bundle is made of", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ct.HostObject("partner-ca", nil)}, Want: []string{"team-a/shard-1"}},
		{Name: "a user's Secret of a Shard without its RootShard", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ct.HostObject("nobody", nil)}, Want: nil},
	})
}

// TestCopiesEnqueueTheShardsNamingThem: an event on a copy of a reference Secret enqueues
// exactly the Shards whose spec.rootShard.secretRef or spec.cache.secretRef names it, in its
// namespace.
func TestCopiesEnqueueTheShardsNamingThem(t *testing.T) {
	w := ct.NewWatching(t)
	c, err := controller.BuildWatching[Controller](kinds.Shard, w.Deps())
	require.NoError(t, err)
	joinedBy := func(namespace, name, secret string) *operatorv1alpha1.Shard {
		return &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{SecretRef: &corev1.LocalObjectReference{Name: secret}}}}
	}
	joined, joinedToo, other := joinedBy("team-a", "joined", "root-shard-join"), joinedBy("team-a", "joined-too", "root-shard-join"), joinedBy("team-a", "other", "other-shard-join")
	elsewhere := joinedBy("team-b", "elsewhere", "root-shard-join")
	cached := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "cached"},
		Spec: operatorv1alpha1.ShardSpec{RootShard: ct.RootShardRef("root"),
			Cache: &operatorv1alpha1.CacheConfig{SecretRef: &corev1.LocalObjectReference{Name: "cache-cache-client"}}}}
	both := joinedBy("team-a", "both", "other-shard-join")
	both.Spec.Cache = &operatorv1alpha1.CacheConfig{SecretRef: &corev1.LocalObjectReference{Name: "cache-cache-client"}}
	plain := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "plain"}, Spec: operatorv1alpha1.ShardSpec{RootShard: ct.RootShardRef("root")}}
	w.Add(t, joined, joinedToo, other, elsewhere, cached, both, plain)
	copyOf := func(namespace, name string, r reference.Reference) ct.Event {
		return ct.Event{Source: string(ct.ReferenceCopies), Type: ct.Added, Obj: ct.ReferenceCopy(namespace, name, r)}
	}
	updated := copyOf("team-a", "root-shard-join", reference.ShardJoin)
	updated.Type = ct.Updated
	deleted := copyOf("team-a", "cache-cache-client", reference.CacheClient)
	deleted.Type = ct.DeletedUnknown

	w.RunWatchCases(t, c.Loop, c.Watched.Handlers(c.Loop, w.Host.Host, w.Informers), []ct.WatchCase{
		{Name: "a shard-join copy added", Event: copyOf("team-a", "root-shard-join", reference.ShardJoin), Want: []string{"team-a/joined", "team-a/joined-too"}},
		{Name: "a shard-join copy updated", Event: updated, Want: []string{"team-a/joined", "team-a/joined-too"}},
		{Name: "another shard-join copy", Event: copyOf("team-a", "other-shard-join", reference.ShardJoin), Want: []string{"team-a/both", "team-a/other"}},
		{Name: "a copy of another namespace", Event: copyOf("team-b", "root-shard-join", reference.ShardJoin), Want: []string{"team-b/elsewhere"}},
		{Name: "a cache-client copy", Event: copyOf("team-a", "cache-cache-client", reference.CacheClient), Want: []string{"team-a/both", "team-a/cached"}},
		{Name: "a cache-client copy deleted, seen late", Event: deleted, Want: []string{"team-a/both", "team-a/cached"}},
		{Name: "a copy no Shard names", Event: copyOf("team-a", "root-front-proxy-join", reference.FrontProxyJoin), Want: nil},
		// A Secret of a copy's name without the reference label, which the informer of copies
		// does not see: ReferenceValid says it is not labelled, or no longer.
		{Name: "an unlabelled shard-join Secret added", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Added, Obj: ct.HostObject("root-shard-join", nil)},
			Want: []string{"team-a/joined", "team-a/joined-too"}},
		{Name: "an unlabelled cache-client Secret deleted", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Deleted, Obj: ct.HostObject("cache-cache-client", nil)},
			Want: []string{"team-a/both", "team-a/cached"}},
		{Name: "a shard-join copy's label removed", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ct.HostObject("root-shard-join", nil),
			Old: ct.HostObject("root-shard-join", map[string]string{reference.Label: string(reference.ShardJoin)})}, Want: []string{"team-a/joined", "team-a/joined-too"}},
		{Name: "an unlabelled Secret no Shard names", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Added, Obj: ct.HostObject("root-front-proxy-join", nil)}, Want: nil},
	})
}

// TestUsersSecretsOfTheRootShardEnqueueItsShards: a user's Secret that a Shard's pods mount
// through its RootShard's spec (the root CA the user provides) enqueues the RootShard's
// Shards, which name it nowhere in their own spec, and no other Shard.
func TestUsersSecretsOfTheRootShardEnqueueItsShards(t *testing.T) {
	w := ct.NewWatching(t)
	c, err := controller.BuildWatching[Controller](kinds.Shard, w.Deps())
	require.NoError(t, err)
	root := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root"},
		Spec: operatorv1alpha1.RootShardSpec{Certificates: &operatorv1alpha1.Certificates{CASecretRef: &corev1.LocalObjectReference{Name: "company-ca"}}}}
	other := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "other-root"}}
	shardOf := func(name, rs string) *operatorv1alpha1.Shard {
		return &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name},
			Spec: operatorv1alpha1.ShardSpec{RootShard: ct.RootShardRef(rs)}}
	}
	w.Add(t, root, other, shardOf("shard-1", "root"), shardOf("shard-2", "root"), shardOf("elsewhere", "other-root"))

	w.RunWatchCases(t, c.Loop, c.Watched.Handlers(c.Loop, w.Host.Host, w.Informers), []ct.WatchCase{
		{Name: "the RootShard's CA Secret", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ct.HostObject("company-ca", nil)},
			Want: []string{"team-a/shard-1", "team-a/shard-2"}},
		{Name: "another RootShard's root CA Secret: its Shards alone", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ct.HostObject("other-root-ca", nil)},
			Want: []string{"team-a/elsewhere"}},
	})
}
