package frontproxy

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

// TestWatchesEnqueueTheFrontProxiesConcerned: every event a FrontProxy's controller watches
// enqueues exactly the FrontProxies it concerns.
func TestWatchesEnqueueTheFrontProxiesConcerned(t *testing.T) {
	w := ct.NewWatching(t)
	c, err := controller.BuildWatching[Controller](kinds.FrontProxy, w.Deps())
	require.NoError(t, err)
	edge := &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "edge"},
		Spec: operatorv1alpha1.FrontProxySpec{RootShard: ct.RootShardRef("root"), CABundleSecretRef: &corev1.LocalObjectReference{Name: "partner-ca"}}}
	other := &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "other-edge"},
		Spec: operatorv1alpha1.FrontProxySpec{RootShard: ct.RootShardRef("other-root"),
			AdditionalPathMappings: []operatorv1alpha1.PathMappingEntry{{Path: "/services/access", VirtualWorkspaceRef: &corev1.LocalObjectReference{Name: "access"}}}}}
	s1 := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shard-1"},
		Spec: operatorv1alpha1.ShardSpec{RootShard: ct.RootShardRef("root")}}
	root := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root"},
		Spec: operatorv1alpha1.RootShardSpec{CommonShardSpec: operatorv1alpha1.CommonShardSpec{KcpVirtualWorkspace: &corev1.LocalObjectReference{Name: "root-vw"}}}}
	w.Add(t, edge, other, s1, root)
	owned := pki.Labels("frontproxy", "edge", "server")

	w.RunWatchCases(t, c.Loop, c.Watched.Handlers(c.Loop, w.Host.Host, w.Informers), []ct.WatchCase{
		{Name: "a FrontProxy updated", Event: ct.Event{Source: "FrontProxy", Type: ct.Updated, Obj: edge}, Want: []string{"team-a/edge"}},
		{Name: "a RootShard: its FrontProxies", Event: ct.Event{Source: "RootShard", Type: ct.Updated,
			Obj: &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root"}}}, Want: []string{"team-a/edge"}},
		{Name: "the VirtualWorkspace its RootShard names", Event: ct.Event{Source: "VirtualWorkspace", Type: ct.Added,
			Obj: &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root-vw"}}}, Want: []string{"team-a/edge"}},
		{Name: "a VirtualWorkspace a path mapping names", Event: ct.Event{Source: "VirtualWorkspace", Type: ct.Updated,
			Obj: &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "access"}}}, Want: []string{"team-a/other-edge"}},
		{Name: "a VirtualWorkspace no RootShard names", Event: ct.Event{Source: "VirtualWorkspace", Type: ct.Added,
			Obj: &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shard-vw"}}}, Want: nil},
		{Name: "a Shard added: its RootShard's", Event: ct.Event{Source: "Shard", Type: ct.Added, Obj: s1}, Want: []string{"team-a/edge"}},
		{Name: "a Shard updated: nothing", Event: ct.Event{Source: "Shard", Type: ct.Updated, Obj: s1}, Want: nil},
		{Name: "a Shard deleted", Event: ct.Event{Source: "Shard", Type: ct.Deleted, Obj: s1}, Want: []string{"team-a/edge"}},
		{Name: "its Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("edge-server", owned)}, Want: []string{"team-a/edge"}},
		{Name: "its ConfigMap", Event: ct.Event{Source: "configmaps", Type: ct.Updated, Obj: ct.HostObject("edge-config", owned)}, Want: []string{"team-a/edge"}},
		{Name: "its Service", Event: ct.Event{Source: "services", Type: ct.Added, Obj: ct.HostObject("edge", owned)}, Want: []string{"team-a/edge"}},
		{Name: "its Deployment", Event: ct.Event{Source: "deployments", Type: ct.Updated, Obj: ct.HostObject("edge", owned)}, Want: []string{"team-a/edge"}},
		{Name: "its PodDisruptionBudget", Event: ct.Event{Source: "poddisruptionbudgets", Type: ct.Added, Obj: ct.HostObject("edge", owned)}, Want: []string{"team-a/edge"}},
		{Name: "its Certificate", Event: ct.Event{Source: "certificates", Type: ct.Updated, Obj: ct.HostObject("edge-server", owned)}, Want: []string{"team-a/edge"}},
		{Name: "an Issuer is not watched", Event: ct.Event{Source: "issuers", Type: ct.Added, Obj: ct.HostObject("edge", owned)}, Want: nil},
		{Name: "its RootShard's Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("other-root-ca", pki.Labels("rootshard", "other-root", "ca"))}, Want: []string{"team-a/other-edge"}},
		{Name: "a Shard's service-account Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated,
			Obj: ct.HostObject("shard-1-service-account", pki.Labels("shard", "shard-1", "service-account"))}, Want: []string{"team-a/edge"}},
		{Name: "a Shard's other Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("shard-1-server", pki.Labels("shard", "shard-1", "server"))}, Want: nil},
		{Name: "a user's Secret its bundle is made of", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ct.HostObject("partner-ca", nil)}, Want: []string{"team-a/edge"}},
		{Name: "a user's Secret nobody uses", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ct.HostObject("unused", nil)}, Want: nil},
	})
}

// TestCopiesEnqueueTheFrontProxiesNamingThem: an event on a copy of a reference Secret
// enqueues exactly the FrontProxies whose spec.rootShard.secretRef names it, in its namespace.
func TestCopiesEnqueueTheFrontProxiesNamingThem(t *testing.T) {
	w := ct.NewWatching(t)
	c, err := controller.BuildWatching[Controller](kinds.FrontProxy, w.Deps())
	require.NoError(t, err)
	joinedBy := func(namespace, name, secret string) *operatorv1alpha1.FrontProxy {
		return &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: operatorv1alpha1.FrontProxySpec{RootShard: operatorv1alpha1.RootShardConfig{SecretRef: &corev1.LocalObjectReference{Name: secret}}}}
	}
	plain := &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "plain"},
		Spec: operatorv1alpha1.FrontProxySpec{RootShard: ct.RootShardRef("root")}}
	w.Add(t, joinedBy("team-a", "edge", "root-front-proxy-join"), joinedBy("team-a", "edge-2", "root-front-proxy-join"),
		joinedBy("team-a", "other", "other-front-proxy-join"), joinedBy("team-b", "elsewhere", "root-front-proxy-join"), plain)
	copyOf := func(typ, namespace, name string, r reference.Reference) ct.Event {
		return ct.Event{Source: string(ct.ReferenceCopies), Type: typ, Obj: ct.ReferenceCopy(namespace, name, r)}
	}

	w.RunWatchCases(t, c.Loop, c.Watched.Handlers(c.Loop, w.Host.Host, w.Informers), []ct.WatchCase{
		{Name: "a copy added", Event: copyOf(ct.Added, "team-a", "root-front-proxy-join", reference.FrontProxyJoin), Want: []string{"team-a/edge", "team-a/edge-2"}},
		{Name: "a copy updated", Event: copyOf(ct.Updated, "team-a", "root-front-proxy-join", reference.FrontProxyJoin), Want: []string{"team-a/edge", "team-a/edge-2"}},
		{Name: "a copy deleted", Event: copyOf(ct.Deleted, "team-a", "other-front-proxy-join", reference.FrontProxyJoin), Want: []string{"team-a/other"}},
		{Name: "a copy of another namespace", Event: copyOf(ct.Added, "team-b", "root-front-proxy-join", reference.FrontProxyJoin), Want: []string{"team-b/elsewhere"}},
		{Name: "a copy no FrontProxy names", Event: copyOf(ct.Added, "team-a", "root-shard-join", reference.ShardJoin), Want: nil},
	})
}
