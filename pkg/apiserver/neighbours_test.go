package apiserver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store/storetest"
)

func neighboursOf(objects ...runtime.Object) store.Neighbours {
	kinds := map[string]rest.Lister{}
	for resource, newList := range map[string]func() runtime.Object{
		"rootshards":        func() runtime.Object { return &operator.RootShardList{} },
		"shards":            func() runtime.Object { return &operator.ShardList{} },
		"frontproxies":      func() runtime.Object { return &operator.FrontProxyList{} },
		"kubeconfigs":       func() runtime.Object { return &operator.KubeconfigList{} },
		"cacheservers":      func() runtime.Object { return &operator.CacheServerList{} },
		"virtualworkspaces": func() runtime.Object { return &operator.VirtualWorkspaceList{} },
	} {
		var own []runtime.Object
		for _, o := range objects {
			if resourceOf(kindOf(o)).Resource == resource {
				own = append(own, o)
			}
		}
		kinds[resource] = storetest.Lister{NewListFunc: newList, Objects: own}
	}
	return store.NeighboursOf(context.Background(), kinds)
}

func rootShardIn(ns, name, domain, baseURL string) *operator.RootShard {
	return &operator.RootShard{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: operator.RootShardSpec{CommonShardSpec: operator.CommonShardSpec{ClusterDomain: domain, ShardBaseURL: baseURL}}}
}

func shardIn(ns, name, baseURL string) *operator.Shard {
	return &operator.Shard{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: operator.ShardSpec{RootShard: operator.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}},
			CommonShardSpec: operator.CommonShardSpec{ShardBaseURL: baseURL}}}
}

// TestBackendsStayInTheClusterDomain: a path mapping's backend <svc>.<ns>.svc.<domain> is
// refused (422 at the backend) unless the domain is the RootShard's clusterDomain, else
// cluster.local; shorter Service names are validation's.
func TestBackendsStayInTheClusterDomain(t *testing.T) {
	fp := func(ref string, backends ...string) *operator.FrontProxy {
		o := &operator.FrontProxy{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "team-a"}}
		if ref != "" {
			o.Spec.RootShard.Reference = &corev1.LocalObjectReference{Name: ref}
		} else {
			o.Spec.RootShard.SecretRef = &corev1.LocalObjectReference{Name: "root-front-proxy-join"}
		}
		for _, b := range backends {
			o.Spec.AdditionalPathMappings = append(o.Spec.AdditionalPathMappings, operator.PathMappingEntry{Path: "/" + b, Backend: b})
		}
		return o
	}
	tests := []struct {
		name      string
		obj, old  *operator.FrontProxy
		neighbour runtime.Object
		refused   []string
	}{
		{name: "short names and cluster.local", obj: fp("root", "https://svc", "https://svc.team-a", "https://svc.team-a.svc", "https://svc.team-a.svc.cluster.local:6443"),
			neighbour: rootShardIn("team-a", "root", "", "")},
		{name: "another domain", obj: fp("root", "https://svc.team-a.svc.cluster.local", "https://svc.team-a.svc.attacker.example:6443"),
			neighbour: rootShardIn("team-a", "root", "", ""), refused: []string{"spec.additionalPathMappings[1].backend"}},
		{name: "the RootShard's own domain", obj: fp("root", "https://svc.team-a.svc.corp.internal", "https://svc.team-a.svc.cluster.local"),
			neighbour: rootShardIn("team-a", "root", "corp.internal", ""), refused: []string{"spec.additionalPathMappings[1].backend"}},
		{name: "a RootShard of that name in another namespace does not count", obj: fp("root", "https://svc.team-a.svc.corp.internal"),
			neighbour: rootShardIn("team-b", "root", "corp.internal", ""), refused: []string{"spec.additionalPathMappings[0].backend"}},
		{name: "joined by a copy: cluster.local", obj: fp("", "https://svc.team-a.svc.attacker.example"), refused: []string{"spec.additionalPathMappings[0].backend"}},
		{name: "an update that keeps the mappings", obj: fp("root", "https://svc.team-a.svc.attacker.example"), old: fp("root", "https://svc.team-a.svc.attacker.example")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var objects []runtime.Object
			if tc.neighbour != nil {
				objects = append(objects, tc.neighbour)
			}
			var old runtime.Object
			if tc.old != nil {
				old = tc.old
			}
			err := backendsInClusterDomain(context.Background(), neighboursOf(objects...), tc.obj, old)
			if len(tc.refused) == 0 {
				require.NoError(t, err)
				return
			}
			require.True(t, apierrors.IsInvalid(err), "a 422: %v", err)
			for _, f := range tc.refused {
				assert.Contains(t, err.Error(), f+": Forbidden: must be a Service of this cluster")
			}
		})
	}
}

// TestShardBaseURLIsNoOtherShards: a shardBaseURL another Shard or RootShard is reached at,
// its own or in-cluster, in any namespace, is a 422; another namespace's object is not named.
func TestShardBaseURLIsNoOtherShards(t *testing.T) {
	others := []runtime.Object{
		rootShardIn("team-a", "root", "", "https://root.example.com:6443"),
		shardIn("team-a", "alpha", ""),
		shardIn("team-b", "gamma", "https://gamma.example.com"),
	}
	tests := []struct {
		name     string
		obj, old *operator.Shard
		says     string
	}{
		{name: "no shardBaseURL", obj: shardIn("team-a", "beta", "")},
		{name: "an address of its own", obj: shardIn("team-a", "beta", "https://beta.example.com:6443")},
		{name: "the RootShard's", obj: shardIn("team-a", "beta", "https://ROOT.example.com:6443/"), says: `the base URL of RootShard "root" of this namespace`},
		{name: "another Shard's in-cluster address", obj: shardIn("team-a", "beta", "https://alpha-shard-kcp.team-a.svc.cluster.local:6443"),
			says: `the base URL of Shard "alpha" of this namespace`},
		{name: "another namespace's Shard, unnamed", obj: shardIn("team-a", "beta", "https://gamma.example.com:443"), says: "the base URL of another shard: one address serves one shard"},
		{name: "its own stored address on update", obj: shardIn("team-b", "gamma", "https://gamma.example.com"), old: shardIn("team-b", "gamma", "https://gamma.example.com")},
		{name: "moved onto another's on update", obj: shardIn("team-a", "alpha", "https://root.example.com:6443"), old: shardIn("team-a", "alpha", ""),
			says: `RootShard "root"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var old runtime.Object
			if tc.old != nil {
				old = tc.old
			}
			err := shardBaseURLUnused(NewScheme(), neighboursOf(others...), tc.obj, old)
			if tc.says == "" {
				require.NoError(t, err)
				return
			}
			require.True(t, apierrors.IsInvalid(err), "a 422: %v", err)
			assert.Contains(t, err.Error(), "spec.shardBaseURL: Invalid value")
			assert.Contains(t, err.Error(), tc.says)
			assert.NotContains(t, err.Error(), "gamma\"", "another namespace's Shard is not named")
		})
	}
}
