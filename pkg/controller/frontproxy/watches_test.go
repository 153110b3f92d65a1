package frontproxy

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	ct "github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	opfake "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// TestWatchesEnqueueTheFrontProxiesConcerned: every event a FrontProxy's controller watches
// enqueues exactly the FrontProxies it concerns.
func TestWatchesEnqueueTheFrontProxiesConcerned(t *testing.T) {
	w := ct.NewWatching(t)
	c, err := New(opfake.NewSimpleClientset(), w.Informers, w.Host.Host, record.NewFakeRecorder(10))
	require.NoError(t, err)
	edge := &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "edge"},
		Spec: operatorv1alpha1.FrontProxySpec{RootShard: ct.RootShardRef("root"), CABundleSecretRef: &corev1.LocalObjectReference{Name: "partner-ca"}}}
	other := &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "other-edge"},
		Spec: operatorv1alpha1.FrontProxySpec{RootShard: ct.RootShardRef("other-root")}}
	s1 := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shard-1"},
		Spec: operatorv1alpha1.ShardSpec{RootShard: ct.RootShardRef("root")}}
	w.Add(t, edge, other, s1)
	owned := pki.Labels("frontproxy", "edge", "server")

	w.RunWatchCases(t, c.loop, c.watches(w.Informers).Handlers(c.loop, w.Host.Host, w.Informers), []ct.WatchCase{
		{"a FrontProxy updated", ct.Event{Source: "FrontProxy", Type: ct.Updated, Obj: edge}, []string{"team-a/edge"}},
		{"a RootShard: its FrontProxies", ct.Event{Source: "RootShard", Type: ct.Updated,
			Obj: &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root"}}}, []string{"team-a/edge"}},
		{"a Shard added: its RootShard's", ct.Event{Source: "Shard", Type: ct.Added, Obj: s1}, []string{"team-a/edge"}},
		{"a Shard updated: nothing", ct.Event{Source: "Shard", Type: ct.Updated, Obj: s1}, nil},
		{"a Shard deleted", ct.Event{Source: "Shard", Type: ct.Deleted, Obj: s1}, []string{"team-a/edge"}},
		{"its Secret", ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("edge-server", owned)}, []string{"team-a/edge"}},
		{"its ConfigMap", ct.Event{Source: "configmaps", Type: ct.Updated, Obj: ct.HostObject("edge-config", owned)}, []string{"team-a/edge"}},
		{"its Service", ct.Event{Source: "services", Type: ct.Added, Obj: ct.HostObject("edge", owned)}, []string{"team-a/edge"}},
		{"its Deployment", ct.Event{Source: "deployments", Type: ct.Updated, Obj: ct.HostObject("edge", owned)}, []string{"team-a/edge"}},
		{"its PodDisruptionBudget", ct.Event{Source: "poddisruptionbudgets", Type: ct.Added, Obj: ct.HostObject("edge", owned)}, []string{"team-a/edge"}},
		{"its Certificate", ct.Event{Source: "certificates", Type: ct.Updated, Obj: ct.HostObject("edge-server", owned)}, []string{"team-a/edge"}},
		{"an Issuer is not watched", ct.Event{Source: "issuers", Type: ct.Added, Obj: ct.HostObject("edge", owned)}, nil},
		{"its RootShard's Secret", ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("other-root-ca", pki.Labels("rootshard", "other-root", "ca"))}, []string{"team-a/other-edge"}},
		{"a Shard's service-account Secret", ct.Event{Source: "secrets", Type: ct.Updated,
			Obj: ct.HostObject("shard-1-service-account", pki.Labels("shard", "shard-1", "service-account"))}, []string{"team-a/edge"}},
		{"a Shard's other Secret", ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("shard-1-server", pki.Labels("shard", "shard-1", "server"))}, nil},
		{"a user's Secret its bundle is made of", ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ct.HostObject("partner-ca", nil)}, []string{"team-a/edge"}},
		{"a user's Secret nobody uses", ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ct.HostObject("unused", nil)}, nil},
	})
}
