package rootshard

import (
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	ct "github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// TestWatchesEnqueueTheRootShardsConcerned: every event a RootShard's controller watches
// enqueues exactly the RootShards it concerns.
func TestWatchesEnqueueTheRootShardsConcerned(t *testing.T) {
	w := ct.NewWatching(t)
	c, err := controller.BuildWatching[Controller](kinds.RootShard, w.Deps())
	require.NoError(t, err)
	root := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root"}}
	root.Spec.CABundleSecretRef = &corev1.LocalObjectReference{Name: "partner-ca"}
	root.Spec.KcpVirtualWorkspace = &corev1.LocalObjectReference{Name: "root-vw"}
	shard1 := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shard-1"},
		Spec: operatorv1alpha1.ShardSpec{RootShard: ct.RootShardRef("root")}}
	moved := shard1.DeepCopy()
	moved.Spec.RootShard = ct.RootShardRef("other-root")
	unattached := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "unattached"}}
	cs := &operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "cache"}}
	w.Add(t, root, &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "other-root"}}, shard1, cs)
	both := []string{"team-a/other-root", "team-a/root"}
	owned := pki.Labels("rootshard", "root", "server")
	userSecret := ct.HostObject("partner-ca", nil)
	ourSecret := ct.HostObject("partner-ca", map[string]string{pki.LabelManagedBy: pki.ManagedBy})

	w.RunWatchCases(t, c.Loop, c.Watched.Handlers(c.Loop, w.Host.Host, w.Informers), []ct.WatchCase{
		{Name: "a RootShard added", Event: ct.Event{Source: "RootShard", Type: ct.Added, Obj: root}, Want: []string{"team-a/root"}},
		{Name: "a RootShard updated", Event: ct.Event{Source: "RootShard", Type: ct.Updated, Obj: root}, Want: []string{"team-a/root"}},
		{Name: "a RootShard deleted, seen late", Event: ct.Event{Source: "RootShard", Type: ct.DeletedUnknown, Obj: root}, Want: []string{"team-a/root"}},
		{Name: "the VirtualWorkspace it names", Event: ct.Event{Source: "VirtualWorkspace", Type: ct.Updated,
			Obj: &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root-vw"}}}, Want: []string{"team-a/root"}},
		{Name: "a VirtualWorkspace no RootShard names", Event: ct.Event{Source: "VirtualWorkspace", Type: ct.Added,
			Obj: &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shard-vw"}}}, Want: nil},
		{Name: "a VirtualWorkspace of its PKI, serving it", Event: ct.Event{Source: "VirtualWorkspace", Type: ct.Updated,
			Obj: &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "vw-a"},
				Spec: operatorv1alpha1.VirtualWorkspaceSpec{Target: operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: &corev1.LocalObjectReference{Name: "root"}}}}},
			Want: []string{"team-a/root"}},
		{Name: "a VirtualWorkspace of its PKI, serving one of its Shards", Event: ct.Event{Source: "VirtualWorkspace", Type: ct.Updated,
			Obj: &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "vw-b"},
				Spec: operatorv1alpha1.VirtualWorkspaceSpec{Target: operatorv1alpha1.VirtualWorkspaceTarget{ShardRef: &corev1.LocalObjectReference{Name: "shard-1"}}}}},
			Want: []string{"team-a/root"}},
		{Name: "a FrontProxy of it, even its status", Event: ct.Event{Source: "FrontProxy", Type: ct.Updated,
			Obj: &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "fp"},
				Spec: operatorv1alpha1.FrontProxySpec{RootShard: ct.RootShardRef("root")}}},
			Want: []string{"team-a/root"}},
		{Name: "a Shard added", Event: ct.Event{Source: "Shard", Type: ct.Added, Obj: shard1}, Want: []string{"team-a/root"}},
		{Name: "a Shard updated, even its status", Event: ct.Event{Source: "Shard", Type: ct.Updated, Obj: shard1}, Want: []string{"team-a/root"}},
		{Name: "a Shard moved to another RootShard", Event: ct.Event{Source: "Shard", Type: ct.Updated, Old: shard1, Obj: moved}, Want: both},
		{Name: "a Shard deleted", Event: ct.Event{Source: "Shard", Type: ct.Deleted, Obj: shard1}, Want: []string{"team-a/root"}},
		{Name: "a Shard without a RootShard", Event: ct.Event{Source: "Shard", Type: ct.Added, Obj: unattached}, Want: nil},
		{Name: "a Link of it added", Event: ct.Event{Source: "Link", Type: ct.Added, Obj: testLink("eu-1", "root")}, Want: []string{"team-a/root"}},
		{Name: "a Link of it deleted", Event: ct.Event{Source: "Link", Type: ct.Deleted, Obj: testLink("eu-1", "root")}, Want: []string{"team-a/root"}},
		{Name: "a Link updated (its remote reported)", Event: ct.Event{Source: "Link", Type: ct.Updated, Obj: testLink("eu-1", "root")}, Want: []string{"team-a/root"}},
		{Name: "a Link of another RootShard", Event: ct.Event{Source: "Link", Type: ct.Added, Obj: testLink("eu-2", "other-root")}, Want: []string{"team-a/other-root"}},
		{Name: "a CacheServer", Event: ct.Event{Source: "CacheServer", Type: ct.Added, Obj: cs}, Want: both},
		{Name: "its Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("root-server", owned)}, Want: []string{"team-a/root"}},
		{Name: "its Service", Event: ct.Event{Source: "services", Type: ct.Deleted, Obj: ct.HostObject("root", owned)}, Want: []string{"team-a/root"}},
		{Name: "its Deployment", Event: ct.Event{Source: "deployments", Type: ct.Updated, Obj: ct.HostObject("root", owned)}, Want: []string{"team-a/root"}},
		{Name: "its PodDisruptionBudget", Event: ct.Event{Source: "poddisruptionbudgets", Type: ct.Added, Obj: ct.HostObject("root", owned)}, Want: []string{"team-a/root"}},
		{Name: "its Certificate", Event: ct.Event{Source: "certificates", Type: ct.Updated, Obj: ct.HostObject("root-server", owned)}, Want: []string{"team-a/root"}},
		{Name: "its Issuer", Event: ct.Event{Source: "issuers", Type: ct.Added, Obj: ct.HostObject("root-server-ca", owned)}, Want: []string{"team-a/root"}},
		{Name: "its ConfigMap (the internal front proxy's path mappings)", Event: ct.Event{Source: "configmaps", Type: ct.Added, Obj: ct.HostObject("root-proxy-config", owned)}, Want: []string{"team-a/root"}},
		{Name: "a Shard's service-account Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated,
			Obj: ct.HostObject("shard-1-service-account", pki.Labels("shard", "shard-1", "service-account"))}, Want: []string{"team-a/root"}},
		{Name: "a Shard's service-account keys", Event: ct.Event{Source: "secrets", Type: ct.Updated,
			Obj: ct.HostObject("shard-1-service-account-trust", pki.Labels("shard", "shard-1", "service-account-trust"))}, Want: []string{"team-a/root"}},
		{Name: "the service-account Secret of a Shard not cached", Event: ct.Event{Source: "secrets", Type: ct.Updated,
			Obj: ct.HostObject("gone-service-account", pki.Labels("shard", "gone", "service-account"))}, Want: nil},
		{Name: "a Shard's other Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("shard-1-server", pki.Labels("shard", "shard-1", "server"))}, Want: nil},
		{Name: "the bootstrap PKI", Event: ct.Event{Source: "issuers", Type: ct.Added, Obj: ct.HostObject(pki.BootstrapCA, certificates.BootstrapLabels())}, Want: both},
		{Name: "a CacheServer's Secret", Event: ct.Event{Source: "secrets", Type: ct.Added, Obj: ct.HostObject("cache-kubeconfig", pki.Labels("cacheserver", "cache", "kubeconfig"))}, Want: both},
		{Name: "a FrontProxy's Secret", Event: ct.Event{Source: "secrets", Type: ct.Added, Obj: ct.HostObject("edge-server", pki.Labels("frontproxy", "edge", "server"))}, Want: nil},
		{Name: "a user's Secret it is made of", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: userSecret}, Want: []string{"team-a/root"}},
		{Name: "a Secret of ours, by metadata", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ourSecret}, Want: nil},
		{Name: "a user's Secret nobody uses", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Added, Obj: ct.HostObject("unused", nil)}, Want: nil},
	})
}

// TestCopiesEnqueueTheRootShardsNamingThem: an event on a copy of a reference Secret enqueues
// exactly the RootShards whose spec.cache.secretRef names it, in its namespace.
func TestCopiesEnqueueTheRootShardsNamingThem(t *testing.T) {
	w := ct.NewWatching(t)
	c, err := controller.BuildWatching[Controller](kinds.RootShard, w.Deps())
	require.NoError(t, err)
	naming := func(namespace, name, secret string) *operatorv1alpha1.RootShard {
		rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		rs.Spec.Cache = &operatorv1alpha1.CacheConfig{SecretRef: &corev1.LocalObjectReference{Name: secret}}
		return rs
	}
	byRef := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "by-ref"}}
	byRef.Spec.Cache = &operatorv1alpha1.CacheConfig{Reference: &corev1.LocalObjectReference{Name: "cache-cache-client"}}
	w.Add(t, naming("team-a", "root", "cache-cache-client"), naming("team-a", "other", "other-cache-client"),
		naming("team-b", "elsewhere", "cache-cache-client"), byRef, &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "plain"}})
	copyOf := func(typ, namespace, name string) ct.Event {
		return ct.Event{Source: string(ct.ReferenceCopies), Type: typ, Obj: ct.ReferenceCopy(namespace, name, reference.CacheClient)}
	}

	w.RunWatchCases(t, c.Loop, c.Watched.Handlers(c.Loop, w.Host.Host, w.Informers), []ct.WatchCase{
		{Name: "a copy added", Event: copyOf(ct.Added, "team-a", "cache-cache-client"), Want: []string{"team-a/root"}},
		{Name: "a copy updated", Event: copyOf(ct.Updated, "team-a", "other-cache-client"), Want: []string{"team-a/other"}},
		{Name: "a copy deleted, seen late", Event: copyOf(ct.DeletedUnknown, "team-a", "cache-cache-client"), Want: []string{"team-a/root"}},
		{Name: "a copy of another namespace", Event: copyOf(ct.Added, "team-b", "cache-cache-client"), Want: []string{"team-b/elsewhere"}},
		{Name: "a copy no RootShard names", Event: copyOf(ct.Added, "team-a", "unused-cache-client"), Want: nil},
	})
}

// TestMembersDeploymentsEnqueueTheirSetup: a Deployment of another kind's object enqueues the
// versioned RootShards of its namespace, whose roll may wait for it; a Secret of the same
// labels does not.
func TestMembersDeploymentsEnqueueTheirSetup(t *testing.T) {
	w := ct.NewWatching(t)
	c, err := controller.BuildWatching[Controller](kinds.RootShard, w.Deps())
	require.NoError(t, err)
	versioned := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root"}}
	versioned.Spec.Version = "v0.32.3"
	w.Add(t, versioned, &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "plain"}})
	deployment := func(name string, labels map[string]string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, Labels: labels}}
	}

	w.RunWatchCases(t, c.Loop, c.Watched.Handlers(c.Loop, w.Host.Host, w.Informers), []ct.WatchCase{
		{Name: "a Shard's Deployment", Event: ct.Event{Source: "deployments", Type: ct.Updated,
			Obj: deployment("s1-shard-kcp", pki.Labels("shard", "s1", "kcp"))}, Want: []string{"team-a/root"}},
		{Name: "a FrontProxy's Deployment", Event: ct.Event{Source: "deployments", Type: ct.Updated,
			Obj: deployment("edge-front-proxy", pki.Labels("frontproxy", "edge", "front-proxy"))}, Want: []string{"team-a/root"}},
		{Name: "its own Deployment", Event: ct.Event{Source: "deployments", Type: ct.Updated,
			Obj: deployment("plain-kcp", pki.Labels("rootshard", "plain", "kcp"))}, Want: []string{"team-a/plain"}},
		{Name: "a Shard's Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated,
			Obj: ct.HostObject("s1-server", pki.Labels("shard", "s1", "server"))}, Want: nil},
	})
}
