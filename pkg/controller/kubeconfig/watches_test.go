package kubeconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	ct "github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// TestWatchesEnqueueTheKubeconfigsConcerned: every event a Kubeconfig's controller watches
// enqueues exactly the Kubeconfigs it concerns.
func TestWatchesEnqueueTheKubeconfigsConcerned(t *testing.T) {
	w := ct.NewWatching(t)
	c, err := controller.BuildWatching[Controller](kinds.Kubeconfig, w.Deps())
	require.NoError(t, err)
	toRoot := kubeconfigFor("to-root", operatorv1alpha1.KubeconfigTarget{RootShardRef: &corev1.LocalObjectReference{Name: "root"}})
	w.Add(t, toRoot,
		kubeconfigFor("to-shard", operatorv1alpha1.KubeconfigTarget{ShardRef: &corev1.LocalObjectReference{Name: "beta"}}),
		kubeconfigFor("to-edge", toFrontProxy("edge")), kubeconfigFor("elsewhere", toFrontProxy("other-edge")),
		kubeconfigFor("joined", toSecret("root-kubeconfig-issuer")),
		shard("beta", "root"), frontProxy("edge", "root"), frontProxy("other-edge", "other"))
	ofRoot := []string{"team-a/to-edge", "team-a/to-root", "team-a/to-shard"}
	owned := map[string]string{"operator.kcp.io/kubeconfig": "to-edge"}

	w.RunWatchCases(t, c.Loop, c.Watched.Handlers(c.Loop, w.Host.Host, w.Informers), []ct.WatchCase{
		{Name: "a Kubeconfig added", Event: ct.Event{Source: "Kubeconfig", Type: ct.Added, Obj: toRoot}, Want: []string{"team-a/to-root"}},
		{Name: "a Kubeconfig deleted, seen late", Event: ct.Event{Source: "Kubeconfig", Type: ct.DeletedUnknown, Obj: toRoot}, Want: []string{"team-a/to-root"}},
		{Name: "a RootShard: every Kubeconfig it signs", Event: ct.Event{Source: "RootShard", Type: ct.Updated, Obj: rootShard("root")}, Want: ofRoot},
		{Name: "a Shard: those toward it", Event: ct.Event{Source: "Shard", Type: ct.Updated, Obj: shard("beta", "root")}, Want: []string{"team-a/to-shard"}},
		{Name: "a Shard nobody targets", Event: ct.Event{Source: "Shard", Type: ct.Added, Obj: shard("gamma", "root")}, Want: nil},
		{Name: "a FrontProxy: those toward it", Event: ct.Event{Source: "FrontProxy", Type: ct.Deleted, Obj: frontProxy("other-edge", "other")}, Want: []string{"team-a/elsewhere"}},
		{Name: "a CacheServer is not watched", Event: ct.Event{Source: "CacheServer", Type: ct.Added, Obj: &operatorv1alpha1.CacheServer{}}, Want: nil},
		{Name: "its Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("kubeconfig-to-edge", owned)}, Want: []string{"team-a/to-edge"}},
		{Name: "its Certificate", Event: ct.Event{Source: "certificates", Type: ct.Updated, Obj: ct.HostObject("kubeconfig-to-edge", owned)}, Want: []string{"team-a/to-edge"}},
		{Name: "its Issuer (a local CA's)", Event: ct.Event{Source: "issuers", Type: ct.Deleted, Obj: ct.HostObject("x", owned)}, Want: []string{"team-a/to-edge"}},
		{Name: "the copy of a kubeconfig-issuer Secret: those toward it", Event: ct.Event{Source: string(controller.ReferenceSecrets), Type: ct.Added,
			Obj: ct.HostObject("root-kubeconfig-issuer", map[string]string{reference.Label: string(reference.KubeconfigIssuer)})}, Want: []string{"team-a/joined"}},
		{Name: "a reference Secret nobody names", Event: ct.Event{Source: string(controller.ReferenceSecrets), Type: ct.Updated,
			Obj: ct.HostObject("root-shard-join", map[string]string{reference.Label: string(reference.ShardJoin)})}, Want: nil},
		{Name: "the copy deleted", Event: ct.Event{Source: string(controller.ReferenceSecrets), Type: ct.Deleted,
			Obj: ct.HostObject("root-kubeconfig-issuer", nil)}, Want: []string{"team-a/joined"}},
		{Name: "a Deployment is not watched", Event: ct.Event{Source: "deployments", Type: ct.Added, Obj: ct.HostObject("x", owned)}, Want: nil},
		{Name: "a RootShard's merged CA bundle", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: caBundle("root")}, Want: ofRoot},
		{Name: "another of the RootShard's Secrets", Event: ct.Event{Source: "secrets", Type: ct.Updated,
			Obj: ct.HostObject("root-server-ca", pki.Labels("rootshard", "root", "ca"))}, Want: nil},
		{Name: "a FrontProxy's merged CA bundle", Event: ct.Event{Source: "secrets", Type: ct.Updated,
			Obj: ct.HostObject("edge-merged-ca-bundle", pki.Labels("frontproxy", "edge", "merged-ca-bundle"))}, Want: []string{"team-a/to-edge"}},
		{Name: "a user's Secret nobody names", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ct.HostObject("to-edge-kubeconfig", nil)}, Want: nil},
		// A Secret of the copy's name without the reference label, which the informer of
		// copies does not see: ReferenceValid says it is not labelled, or no longer.
		{Name: "an unlabelled Secret of the copy's name added", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Added,
			Obj: ct.HostObject("root-kubeconfig-issuer", nil)}, Want: []string{"team-a/joined"}},
		{Name: "an unlabelled Secret of the copy's name changed", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated,
			Obj: ct.HostObject("root-kubeconfig-issuer", nil)}, Want: nil},
		{Name: "the copy's label removed", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ct.HostObject("root-kubeconfig-issuer", nil),
			Old: ct.HostObject("root-kubeconfig-issuer", map[string]string{reference.Label: string(reference.KubeconfigIssuer)})}, Want: []string{"team-a/joined"}},
		{Name: "an unlabelled Secret of the copy's name deleted", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.DeletedUnknown,
			Obj: ct.HostObject("root-kubeconfig-issuer", nil)}, Want: []string{"team-a/joined"}},
		{Name: "a labelled copy added: the informer of copies' event", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Added,
			Obj: ct.HostObject("root-kubeconfig-issuer", map[string]string{reference.Label: string(reference.KubeconfigIssuer)})}, Want: nil},
	})
}
