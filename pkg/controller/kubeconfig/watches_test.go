package kubeconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	ct "github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	opfake "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/fake"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// TestWatchesEnqueueTheKubeconfigsConcerned: every event a Kubeconfig's controller watches
// enqueues exactly the Kubeconfigs it concerns.
func TestWatchesEnqueueTheKubeconfigsConcerned(t *testing.T) {
	w := ct.NewWatching(t)
	c, err := New(opfake.NewSimpleClientset(), w.Informers, w.Host.Host, record.NewFakeRecorder(10))
	require.NoError(t, err)
	toRoot := kubeconfigFor("to-root", operatorv1alpha1.KubeconfigTarget{RootShardRef: &corev1.LocalObjectReference{Name: "root"}})
	w.Add(t, toRoot,
		kubeconfigFor("to-shard", operatorv1alpha1.KubeconfigTarget{ShardRef: &corev1.LocalObjectReference{Name: "beta"}}),
		kubeconfigFor("to-edge", toFrontProxy("edge")), kubeconfigFor("elsewhere", toFrontProxy("other-edge")),
		shard("beta", "root"), frontProxy("edge", "root"), frontProxy("other-edge", "other"))
	ofRoot := []string{"team-a/to-edge", "team-a/to-root", "team-a/to-shard"}
	owned := map[string]string{"operator.kcp.io/kubeconfig": "to-edge"}

	w.RunWatchCases(t, c.loop, c.watches(w.Informers).Handlers(c.loop, w.Host.Host, w.Informers), []ct.WatchCase{
		{"a Kubeconfig added", ct.Event{Source: "Kubeconfig", Type: ct.Added, Obj: toRoot}, []string{"team-a/to-root"}},
		{"a Kubeconfig deleted, seen late", ct.Event{Source: "Kubeconfig", Type: ct.DeletedUnknown, Obj: toRoot}, []string{"team-a/to-root"}},
		{"a RootShard: every Kubeconfig it signs", ct.Event{Source: "RootShard", Type: ct.Updated, Obj: rootShard("root")}, ofRoot},
		{"a Shard: those toward it", ct.Event{Source: "Shard", Type: ct.Updated, Obj: shard("beta", "root")}, []string{"team-a/to-shard"}},
		{"a Shard nobody targets", ct.Event{Source: "Shard", Type: ct.Added, Obj: shard("gamma", "root")}, nil},
		{"a FrontProxy: those toward it", ct.Event{Source: "FrontProxy", Type: ct.Deleted, Obj: frontProxy("other-edge", "other")}, []string{"team-a/elsewhere"}},
		{"a CacheServer is not watched", ct.Event{Source: "CacheServer", Type: ct.Added, Obj: &operatorv1alpha1.CacheServer{}}, nil},
		{"its Secret", ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("kubeconfig-to-edge", owned)}, []string{"team-a/to-edge"}},
		{"its Certificate", ct.Event{Source: "certificates", Type: ct.Updated, Obj: ct.HostObject("kubeconfig-to-edge", owned)}, []string{"team-a/to-edge"}},
		{"an Issuer is not watched", ct.Event{Source: "issuers", Type: ct.Added, Obj: ct.HostObject("x", owned)}, nil},
		{"a Deployment is not watched", ct.Event{Source: "deployments", Type: ct.Added, Obj: ct.HostObject("x", owned)}, nil},
		{"a RootShard's merged CA bundle", ct.Event{Source: "secrets", Type: ct.Updated, Obj: caBundle("root")}, ofRoot},
		{"another of the RootShard's Secrets", ct.Event{Source: "secrets", Type: ct.Updated,
			Obj: ct.HostObject("root-server-ca", pki.Labels("rootshard", "root", "ca"))}, nil},
		{"a FrontProxy's merged CA bundle", ct.Event{Source: "secrets", Type: ct.Updated,
			Obj: ct.HostObject("edge-merged-ca-bundle", pki.Labels("frontproxy", "edge", "merged-ca-bundle"))}, []string{"team-a/to-edge"}},
		{"users' Secrets are not watched", ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ct.HostObject("to-edge-kubeconfig", nil)}, nil},
	})
}
