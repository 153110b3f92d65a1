package shard

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	ct "github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// BenchmarkWatchKeys measures the cost of mapping one event to the Shards it concerns, with
// n setups (a RootShard and a Shard each) in one namespace: "list" lists the namespace and
// filters, as the key functions did before the indexes; "index" is the key function as it
// is. The list's cost grows with n, the index's with the keys it returns.
func BenchmarkWatchKeys(b *testing.B) {
	for _, n := range []int{100, 1000} {
		c := setups(b, n)
		referencing := c.Watches().Referencing
		listed := func(match func(*operatorv1alpha1.Shard) bool) []string {
			all, err := kinds.Shard.Lister(c.Indexes, "team-a").List(labels.Everything())
			require.NoError(b, err)
			var keys []string
			for _, s := range all {
				if match(s) {
					keys = append(keys, s.Namespace+"/"+s.Name)
				}
			}
			return keys
		}
		for _, e := range []struct {
			event       string
			list, index func() []string
		}{
			{"RootShard", func() []string {
				return listed(func(s *operatorv1alpha1.Shard) bool { return rootShardName(s) == "root-0" })
			}, func() []string { return c.shardsOf("team-a", "root-0") }},
			{"ReferenceCopy", func() []string {
				return listed(func(s *operatorv1alpha1.Shard) bool {
					return slices.Contains(kinds.ShardReferenceSecrets(s), "root-1-shard-join")
				})
			}, func() []string { return referencing("team-a", "root-1-shard-join") }},
			{"UsersSecret", func() []string {
				return listed(func(s *operatorv1alpha1.Shard) bool {
					rs, err := kinds.RootShard.Lister(c.Indexes, "team-a").Get(rootShardName(s))
					if s.Spec.RootShard.SecretRef != nil {
						rs, err = reference.JoinedRootShard(shard.Kind, "team-a", s.Name), nil
					}
					return err == nil && (slices.Contains(shard.Server(s, rs).MountedSecrets(), "partner-ca-0") ||
						slices.Contains(controller.BundleSources(s.Spec.CABundleSecretRef, s.Spec.ClientCABundleRef), "partner-ca-0"))
				})
			}, func() []string { return c.mounting("team-a", "partner-ca-0") }},
		} {
			require.ElementsMatch(b, e.list(), e.index(), "%s: the index finds what the list finds", e.event)
			require.NotEmpty(b, e.index(), "%s: the event concerns a Shard", e.event)
			for _, via := range []struct {
				name string
				keys func() []string
			}{{"list", e.list}, {"index", e.index}} {
				b.Run(fmt.Sprintf("%s/objects=%d/via=%s", e.event, n, via.name), func(b *testing.B) {
					for b.Loop() {
						via.keys()
					}
				})
			}
		}
	}
}

// setups is a Shard controller over n setups in team-a: RootShards root-i and Shards shard-i,
// every other one joined by a copy of root-i-shard-join, each with a CA bundle of its own.
func setups(b *testing.B, n int) *Controller {
	w := ct.NewWatching(b)
	c, err := controller.BuildWatching[Controller](kinds.Shard, w.Deps())
	require.NoError(b, err)
	for i := range n {
		rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: fmt.Sprintf("root-%d", i)}}
		s := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: fmt.Sprintf("shard-%d", i)},
			Spec: operatorv1alpha1.ShardSpec{RootShard: ct.RootShardRef(rs.Name)}}
		if i%2 == 1 {
			s.Spec.RootShard = operatorv1alpha1.RootShardConfig{SecretRef: &corev1.LocalObjectReference{Name: rs.Name + "-shard-join"}}
		}
		s.Spec.CABundleSecretRef = &corev1.LocalObjectReference{Name: fmt.Sprintf("partner-ca-%d", i)}
		w.Add(b, rs, s)
	}
	return c
}
