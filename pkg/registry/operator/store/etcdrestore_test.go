package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/rootshard"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/shard"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// TestRestoreNeedsGetOnTheBackupOfItsStore runs the RootShard's and the Shard's own checks, as
// their REST does: a restore puts the snapshots of the setup whose store holds them in place,
// so setting one (on create, or another source on update) needs get on that setup's backup
// subresource, by name: restore.from's source, or the object's own; its 403 names the field
// and the right. Another snapshot of the store already held asks nothing.
func TestRestoreNeedsGetOnTheBackupOfItsStore(t *testing.T) {
	managed := func(r *operator.EtcdRestore) operator.EtcdConfig {
		return operator.EtcdConfig{Managed: &operator.ManagedEtcd{Restore: r}}
	}
	from := func(kind, name, snapshot string) *operator.EtcdRestore {
		return &operator.EtcdRestore{Snapshot: snapshot, From: &operator.EtcdRestoreSource{Kind: kind, Name: name}}
	}
	rootShard := func(r *operator.EtcdRestore) *operator.RootShard {
		o := &operator.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: "team-a"}}
		o.Spec.Etcd = managed(r)
		return o
	}
	shardOf := func(r *operator.EtcdRestore) *operator.Shard {
		o := &operator.Shard{ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: "team-a"}}
		o.Spec.Etcd = managed(r)
		return o
	}
	type attrs struct{ verb, group, resource, subresource, name, namespace string }
	for _, tc := range []struct {
		name     string
		check    func(ctx context.Context, authz authorizer.Authorizer) error
		asks     []attrs
		says     string
		resource string
	}{
		{name: "a RootShard created from a RootShard's store",
			check: func(ctx context.Context, authz authorizer.Authorizer) error {
				return store.CheckRequest(ctx, &rootshard.Kind, authz, rootShard(from("RootShard", "source", "source-20261129-010000")), nil)
			},
			asks: []attrs{{"get", "operator.kcp.io", "rootshards", "backup", "source", "team-a"}},
			says: `spec.etcd.managed.restore.from to RootShard/source without get on rootshards/backup.operator.kcp.io "source" in namespace "team-a"`},
		{name: "a Shard created from a Shard's store",
			check: func(ctx context.Context, authz authorizer.Authorizer) error {
				return store.CheckRequest(ctx, &shard.Kind, authz, shardOf(from("Shard", "old", "old-shard-20261129-010000")), nil)
			},
			asks: []attrs{{"get", "operator.kcp.io", "shards", "backup", "old", "team-a"}},
			says: `spec.etcd.managed.restore.from to Shard/old without get on shards/backup.operator.kcp.io "old" in namespace "team-a"`},
		{name: "another source on update",
			check: func(ctx context.Context, authz authorizer.Authorizer) error {
				return store.CheckRequest(ctx, &rootshard.Kind, authz, rootShard(from("RootShard", "payments", "payments-20261129-010000")),
					rootShard(from("RootShard", "source", "source-20261129-010000")))
			},
			asks: []attrs{{"get", "operator.kcp.io", "rootshards", "backup", "payments", "team-a"}},
			says: `spec.etcd.managed.restore.from to RootShard/payments without get on rootshards/backup.operator.kcp.io "payments"`},
		{name: "another snapshot of the source held already",
			check: func(ctx context.Context, authz authorizer.Authorizer) error {
				return store.CheckRequest(ctx, &rootshard.Kind, authz, rootShard(from("RootShard", "source", "source-20261129-020000")),
					rootShard(from("RootShard", "source", "source-20261129-010000")))
			}},
		{name: "a restore of the object's own store",
			check: func(ctx context.Context, authz authorizer.Authorizer) error {
				return store.CheckRequest(ctx, &rootshard.Kind, authz, rootShard(&operator.EtcdRestore{Snapshot: "copy-20261129-010000"}), nil)
			},
			asks: []attrs{{"get", "operator.kcp.io", "rootshards", "backup", "copy", "team-a"}},
			says: `spec.etcd.managed.restore to RootShard/copy without get on rootshards/backup.operator.kcp.io "copy" in namespace "team-a"`},
		{name: "a Shard's restore of its own store",
			check: func(ctx context.Context, authz authorizer.Authorizer) error {
				return store.CheckRequest(ctx, &shard.Kind, authz, shardOf(&operator.EtcdRestore{Snapshot: "copy-shard-20261129-010000"}), nil)
			},
			asks: []attrs{{"get", "operator.kcp.io", "shards", "backup", "copy", "team-a"}},
			says: `spec.etcd.managed.restore to Shard/copy without get on shards/backup.operator.kcp.io "copy" in namespace "team-a"`},
		{name: "another snapshot of the own store held already",
			check: func(ctx context.Context, authz authorizer.Authorizer) error {
				return store.CheckRequest(ctx, &rootshard.Kind, authz, rootShard(&operator.EtcdRestore{Snapshot: "copy-20261129-020000"}),
					rootShard(&operator.EtcdRestore{Snapshot: "copy-20261129-010000"}))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, allowed := range []bool{false, true} {
				var asked []attrs
				authz := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
					asked = append(asked, attrs{a.GetVerb(), a.GetAPIGroup(), a.GetResource(), a.GetSubresource(), a.GetName(), a.GetNamespace()})
					if allowed {
						return authorizer.DecisionAllow, "", nil
					}
					return authorizer.DecisionNoOpinion, "", nil
				})
				ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "eve"})
				err := tc.check(ctx, authz)
				assert.Equal(t, tc.asks, asked, "allowed %v", allowed)
				if tc.says == "" || allowed {
					require.NoError(t, err, "allowed %v", allowed)
					continue
				}
				require.Error(t, err)
				assert.True(t, apierrors.IsForbidden(err), "a 403, got %v", err)
				assert.Contains(t, err.Error(), `user "eve" may not set `+tc.says)
			}
		})
	}
}
