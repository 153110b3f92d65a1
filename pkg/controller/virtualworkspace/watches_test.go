package virtualworkspace

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
)

// TestWatchesEnqueueTheVirtualWorkspacesConcerned: every event a VirtualWorkspace's
// controller watches enqueues exactly the VirtualWorkspaces it concerns.
func TestWatchesEnqueueTheVirtualWorkspacesConcerned(t *testing.T) {
	w := ct.NewWatching(t)
	c, err := controller.BuildWatching[Controller](kinds.VirtualWorkspace, w.Deps())
	require.NoError(t, err)
	ns := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "team-a", Name: name} }
	rootVW := &operatorv1alpha1.VirtualWorkspace{ObjectMeta: ns("root-vw"),
		Spec: operatorv1alpha1.VirtualWorkspaceSpec{Target: operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: &corev1.LocalObjectReference{Name: "root"}}}}
	shardVW := &operatorv1alpha1.VirtualWorkspace{ObjectMeta: ns("shard-vw"),
		Spec: operatorv1alpha1.VirtualWorkspaceSpec{Target: operatorv1alpha1.VirtualWorkspaceTarget{ShardRef: &corev1.LocalObjectReference{Name: "shard-1"}},
			KubeconfigSecretRef: &corev1.LocalObjectReference{Name: "narrow-identity"}}}
	otherVW := &operatorv1alpha1.VirtualWorkspace{ObjectMeta: ns("other-vw"),
		Spec: operatorv1alpha1.VirtualWorkspaceSpec{Target: operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: &corev1.LocalObjectReference{Name: "other"}},
			ClientCABundleRef: &corev1.LocalObjectReference{Name: "partner-cas"}}}
	shard1 := &operatorv1alpha1.Shard{ObjectMeta: ns("shard-1"), Spec: operatorv1alpha1.ShardSpec{RootShard: ct.RootShardRef("root")}}
	w.Add(t, rootVW, shardVW, otherVW, shard1)
	owned := pki.Labels("virtualworkspace", "shard-vw", "server")
	all := []string{"team-a/other-vw", "team-a/root-vw", "team-a/shard-vw"}

	w.RunWatchCases(t, c.Loop, c.Watched.Handlers(c.Loop, w.Host.Host, w.Informers), []ct.WatchCase{
		{Name: "a VirtualWorkspace added", Event: ct.Event{Source: "VirtualWorkspace", Type: ct.Added, Obj: rootVW}, Want: []string{"team-a/root-vw"}},
		{Name: "a VirtualWorkspace deleted", Event: ct.Event{Source: "VirtualWorkspace", Type: ct.Deleted, Obj: shardVW}, Want: []string{"team-a/shard-vw"}},
		{Name: "its RootShard: those of it and of its Shards", Event: ct.Event{Source: "RootShard", Type: ct.Added,
			Obj: &operatorv1alpha1.RootShard{ObjectMeta: ns("root")}}, Want: []string{"team-a/root-vw", "team-a/shard-vw"}},
		{Name: "its Shard", Event: ct.Event{Source: "Shard", Type: ct.Updated, Obj: shard1}, Want: []string{"team-a/shard-vw"}},
		{Name: "a Shard no VirtualWorkspace serves", Event: ct.Event{Source: "Shard", Type: ct.Added,
			Obj: &operatorv1alpha1.Shard{ObjectMeta: ns("shard-2"), Spec: operatorv1alpha1.ShardSpec{RootShard: ct.RootShardRef("root")}}}, Want: nil},
		{Name: "a CacheServer: every one, any may use its kubeconfig", Event: ct.Event{Source: "CacheServer", Type: ct.Added,
			Obj: &operatorv1alpha1.CacheServer{ObjectMeta: ns("cache")}}, Want: all},
		{Name: "its Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("shard-vw-virtual-workspace-server", owned)}, Want: []string{"team-a/shard-vw"}},
		{Name: "its Service", Event: ct.Event{Source: "services", Type: ct.Added, Obj: ct.HostObject("shard-vw-virtual-workspace", owned)}, Want: []string{"team-a/shard-vw"}},
		{Name: "its Deployment", Event: ct.Event{Source: "deployments", Type: ct.Updated, Obj: ct.HostObject("shard-vw-virtual-workspace", owned)}, Want: []string{"team-a/shard-vw"}},
		{Name: "its PodDisruptionBudget", Event: ct.Event{Source: "poddisruptionbudgets", Type: ct.Added, Obj: ct.HostObject("shard-vw-virtual-workspace", owned)}, Want: []string{"team-a/shard-vw"}},
		{Name: "its Certificate", Event: ct.Event{Source: "certificates", Type: ct.Updated, Obj: ct.HostObject("shard-vw-virtual-workspace-server", owned)}, Want: []string{"team-a/shard-vw"}},
		{Name: "a RootShard's CA", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("root-server-ca", pki.Labels("rootshard", "root", "server-ca"))},
			Want: []string{"team-a/root-vw", "team-a/shard-vw"}},
		{Name: "a Shard's client CA bundle", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("shard-1-merged-client-ca", pki.Labels("shard", "shard-1", "merged-client-ca"))},
			Want: []string{"team-a/shard-vw"}},
		{Name: "a CacheServer's kubeconfig", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("cache-kubeconfig", pki.Labels("cacheserver", "cache", "kubeconfig"))},
			Want: all},
		{Name: "a ConfigMap is not watched", Event: ct.Event{Source: "configmaps", Type: ct.Added, Obj: ct.HostObject("x", owned)}, Want: nil},
		{Name: "the user's kubeconfig Secret", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ct.HostObject("narrow-identity", nil)}, Want: []string{"team-a/shard-vw"}},
		{Name: "the user's CA bundle", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ct.HostObject("partner-cas", nil)}, Want: []string{"team-a/other-vw"}},
		{Name: "a Secret of ours by that name", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated,
			Obj: ct.HostObject("narrow-identity", map[string]string{pki.LabelManagedBy: pki.ManagedBy})}, Want: nil},
	})
}
