package shard

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
)

const kcpShardPath = "/rootshards/root/clusters/root/apis/core.kcp.io/v1alpha1/shards/shard-1"

// deleteShard marks shard-1 as being deleted, and changes it first.
func (k *kcpFixture) deleteShard(t *testing.T, change func(s *operatorv1alpha1.Shard)) {
	s, err := kinds.Shard.Lister(k.c.Indexes, "team-a").Get("shard-1")
	require.NoError(t, err)
	s = s.DeepCopy()
	s.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if change != nil {
		change(s)
	}
	require.NoError(t, k.Caches.Shards.Update(s))
}

// hostDeletes are the deletions made in the host cluster so far.
func (k *kcpFixture) hostDeletes() []string {
	return slices.DeleteFunc(k.Host.Writes(), func(w string) bool { return !strings.HasPrefix(w, "delete") })
}

// finalizerRemoved says whether the last write to the Shard let it go.
func (k *kcpFixture) finalizerRemoved(t *testing.T) bool {
	s, err := k.Ours.OperatorV1alpha1().Shards("team-a").Get(t.Context(), "shard-1", metav1.GetOptions{})
	require.NoError(t, err)
	return !slices.Contains(s.Finalizers, kinds.Shard.Finalizer())
}

// TestDeletedShardIsDeregisteredBeforeItsWorkloads: kcp's Shard object goes first, while the
// shard's workloads are all still there; then they go, then the Shard.
func TestDeletedShardIsDeregisteredBeforeItsWorkloads(t *testing.T) {
	k := newKcpFixture(t, time.Hour)
	var deletedAtDeregistration []string
	k.kcp.Set(func(kcp *controllertest.Kcp) {
		kcp.OnRequest = func(r *http.Request) {
			if r.Method == http.MethodDelete {
				deletedAtDeregistration = k.hostDeletes()
			}
		}
	})
	k.deleteShard(t, nil)

	require.NoError(t, k.c.SyncKey(t.Context(), "team-a/shard-1"))
	assert.Equal(t, []string{"GET " + kcpShardPath, "DELETE " + kcpShardPath}, k.kcp.Requests(), "read first: it must be this shard's")
	assert.NotContains(t, k.kcp.Shards, "shard-1")
	assert.Empty(t, deletedAtDeregistration, "nothing of the host is deleted before kcp's Shard")
	assert.Contains(t, k.hostDeletes(), "delete-collection deployments/", "then the workloads go")
	assert.True(t, k.finalizerRemoved(t))
	assert.Contains(t, k.drainEvents(), `Normal Deregistered kcp's Shard "shard-1" is not in the root workspace any more`)
}

// TestDeletedShardNotInKcpIsLetGo: a Shard kcp has no object of (it never registered, or an
// earlier attempt deleted it) is deregistered already.
func TestDeletedShardNotInKcpIsLetGo(t *testing.T) {
	k := newKcpFixture(t, time.Hour)
	delete(k.kcp.Shards, "shard-1")
	k.deleteShard(t, nil)

	require.NoError(t, k.c.SyncKey(t.Context(), "team-a/shard-1"))
	assert.Equal(t, []string{"GET " + kcpShardPath}, k.kcp.Requests())
	assert.Contains(t, k.hostDeletes(), "delete-collection deployments/")
	assert.True(t, k.finalizerRemoved(t))
}

// TestDeletedShardLeavesAnotherShardsRegistration: kcp's Shard object of the Shard's name is
// deleted only when it carries the Shard's UID (operator.kcp.io/shard-uid), whatever it routes
// to: one with no mark or another Shard's (the root shard registers itself as root; a shard
// joined elsewhere under a name a tenant copies, with its URL) is left, an Event says so, and
// the Shard goes.
func TestDeletedShardLeavesAnotherShardsRegistration(t *testing.T) {
	tests := []struct {
		name, url, mark string
		marked          bool
		says            string
	}{
		{name: "routes elsewhere, another's mark", url: "https://root-kcp.team-a.svc.cluster.local:6443", mark: "root-uid", marked: true,
			says: `carries operator.kcp.io/shard-uid root-uid, not this Shard's ` + shardUID},
		{name: "routes to this shard's URL, another's mark", url: baseURL, mark: "other-uid", marked: true,
			says: `carries operator.kcp.io/shard-uid other-uid, not this Shard's`},
		{name: "routes to this shard's URL, no mark", url: baseURL,
			says: `carries no operator.kcp.io/shard-uid: it was not registered for this Shard, and is left in place`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := newKcpFixture(t, time.Hour)
			k.kcp.Set(func(kcp *controllertest.Kcp) {
				kcp.Shards["shard-1"] = tc.url
				delete(kcp.ShardUIDs, "shard-1")
				if tc.marked {
					kcp.ShardUIDs["shard-1"] = tc.mark
				}
			})
			k.deleteShard(t, nil)

			require.NoError(t, k.c.SyncKey(t.Context(), "team-a/shard-1"))
			assert.Equal(t, []string{"GET " + kcpShardPath}, k.kcp.Requests(), "never deleted")
			assert.Contains(t, k.kcp.Shards, "shard-1")
			assert.True(t, k.finalizerRemoved(t))
			assert.Contains(t, strings.Join(k.drainEvents(), "\n"), `Warning DeregistrationSkipped kcp's Shard "shard-1" in the root workspace `+tc.says)
		})
	}
}

// TestDeletedShardWaitsForKcp: while kcp cannot take the deletion, the Shard stays in
// Deleting with Deregistered=False and the reason, an Event says so, nothing of the host is
// deleted, and the key is retried (an error, for the queue's backoff); once kcp is back, the
// Shard is deregistered and let go.
func TestDeletedShardWaitsForKcp(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kcp    func(k *controllertest.Kcp)
		reason string
		says   string
	}{
		{"unreachable", func(k *controllertest.Kcp) { k.Down = true }, "KcpUnreachable", "kcp cannot be reached"},
		{"unavailable", func(k *controllertest.Kcp) { k.Status = http.StatusServiceUnavailable }, "KcpUnreachable", "kcp answers Service Unavailable"},
		{"refused", func(k *controllertest.Kcp) { k.Status = http.StatusForbidden }, "KcpRefused", "kcp refused the server's identity"},
		{"credentials not issued", func(k *controllertest.Kcp) { k.NoCredentials = true }, "WaitingForCredentials", "root-kcp-operator is not issued yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKcpFixture(t, time.Hour)
			k.kcp.Set(tc.kcp)
			k.deleteShard(t, nil)

			for i := range 2 {
				k.Ours.ClearActions()
				require.Error(t, k.c.SyncKey(t.Context(), "team-a/shard-1"), "retried with backoff")
				if i > 0 {
					assert.Empty(t, k.Host.Writes(k.Ours.Actions()), "the same failure again writes nothing, which would requeue past the backoff")
				}
				s, err := k.Ours.OperatorV1alpha1().Shards("team-a").Get(t.Context(), "shard-1", metav1.GetOptions{})
				require.NoError(t, err)
				require.NoError(t, k.Caches.Shards.Update(s))
				assert.Equal(t, operatorv1alpha1.PhaseDeleting, s.Status.Phase)
				c := condition(s, operatorv1alpha1.ConditionDeregistered)
				assert.Equal(t, metav1.ConditionFalse, c.Status)
				assert.Equal(t, tc.reason, c.Reason)
				assert.Contains(t, c.Message, tc.says)
				assert.Contains(t, c.Message, operatorv1alpha1.AnnotationSkipKcpCleanup, "says how to let it go")
				assert.Empty(t, k.hostDeletes(), "nothing of the host is deleted while kcp's Shard may remain")
				assert.False(t, k.finalizerRemoved(t))
			}
			events := k.drainEvents()
			require.Len(t, events, 1, "one Event, not one per retry: %v", events)
			assert.True(t, strings.HasPrefix(events[0], "Warning DeregistrationFailed"), events[0])

			k.kcp.Set(func(kcp *controllertest.Kcp) { kcp.Down, kcp.Status, kcp.NoCredentials = false, 0, false })
			require.NoError(t, k.c.SyncKey(t.Context(), "team-a/shard-1"))
			assert.NotContains(t, k.kcp.Shards, "shard-1")
			assert.Contains(t, k.hostDeletes(), "delete-collection deployments/")
			assert.True(t, k.finalizerRemoved(t))
		})
	}
}

// TestDeletedShardLetGoWithoutKcp: the annotation, a RootShard that does not exist, and a
// RootShard being deleted whose kcp is gone let the Shard go without kcp, each with an
// Event that says which Shard object may remain.
func TestDeletedShardLetGoWithoutKcp(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, k *kcpFixture)
		event string
	}{
		{"annotation", func(t *testing.T, k *kcpFixture) {
			k.deleteShard(t, func(s *operatorv1alpha1.Shard) {
				s.Annotations = map[string]string{operatorv1alpha1.AnnotationSkipKcpCleanup: "true"}
			})
		}, "the Shard has the annotation " + operatorv1alpha1.AnnotationSkipKcpCleanup},
		{"RootShard missing", func(t *testing.T, k *kcpFixture) {
			require.NoError(t, k.Caches.RootShards.Delete(k.rootShard(t)))
			k.deleteShard(t, nil)
		}, `the RootShard "root" does not exist`},
		{"namespace being deleted, kcp down", func(t *testing.T, k *kcpFixture) {
			_, err := k.Host.Kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{
				ObjectMeta: metav1.ObjectMeta{Name: "team-a"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}, metav1.CreateOptions{})
			require.NoError(t, err)
			k.kcp.Set(func(kcp *controllertest.Kcp) { kcp.Down = true })
			k.deleteShard(t, nil)
		}, "namespace team-a is being deleted, and its RootShard and kcp with it"},
		{"no kcp dialer", func(t *testing.T, k *kcpFixture) {
			k.Host.NoKcpDialer = true
			k.deleteShard(t, nil)
		}, "no kcp can be reached from it (--kcp-dialer=none)"},
		{"RootShard being deleted, its kcp gone", func(t *testing.T, k *kcpFixture) {
			rs := k.rootShard(t).DeepCopy()
			rs.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			require.NoError(t, k.Caches.RootShards.Update(rs))
			k.kcp.Set(func(kcp *controllertest.Kcp) { kcp.Down = true })
			k.deleteShard(t, nil)
		}, `the RootShard "root" is being deleted, and deleting kcp's Shard "shard-1" from the root workspace: kcp cannot be reached`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKcpFixture(t, time.Hour)
			tc.setup(t, k)
			require.NoError(t, k.c.SyncKey(t.Context(), "team-a/shard-1"))
			assert.Contains(t, k.hostDeletes(), "delete-collection deployments/")
			assert.True(t, k.finalizerRemoved(t))
			assert.Contains(t, k.kcp.Shards, "shard-1", "left in kcp")
			events := k.drainEvents()
			assert.True(t, slices.ContainsFunc(events, func(e string) bool {
				return strings.HasPrefix(e, "Warning DeregistrationSkipped") && strings.Contains(e, tc.event)
			}), "events: %v", events)
		})
	}
}

// TestDeletedShardOfADeletingRootShardIsDeregisteredWhileItsKcpAnswers: a RootShard being
// deleted whose kcp still answers takes the deletion.
func TestDeletedShardOfADeletingRootShardIsDeregisteredWhileItsKcpAnswers(t *testing.T) {
	k := newKcpFixture(t, time.Hour)
	rs := k.rootShard(t).DeepCopy()
	rs.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	require.NoError(t, k.Caches.RootShards.Update(rs))
	k.deleteShard(t, nil)
	require.NoError(t, k.c.SyncKey(t.Context(), "team-a/shard-1"))
	assert.NotContains(t, k.kcp.Shards, "shard-1")
	assert.True(t, k.finalizerRemoved(t))
}

// TestDeregistrationFailingAnotherWayWritesNothing: kcp unreachable one way, then another
// (no answer, then a 503): the condition keeps its first message, so that no status write
// requeues the Shard past the queue's backoff.
func TestDeregistrationFailingAnotherWayWritesNothing(t *testing.T) {
	k := newKcpFixture(t, time.Hour)
	k.kcp.Set(func(kcp *controllertest.Kcp) { kcp.Down = true })
	k.deleteShard(t, nil)
	require.Error(t, k.c.SyncKey(t.Context(), "team-a/shard-1"))
	s, err := k.Ours.OperatorV1alpha1().Shards("team-a").Get(t.Context(), "shard-1", metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, k.Caches.Shards.Update(s))
	first := condition(s, operatorv1alpha1.ConditionDeregistered)

	k.kcp.Set(func(kcp *controllertest.Kcp) { kcp.Down, kcp.Status = false, http.StatusServiceUnavailable })
	k.Ours.ClearActions()
	require.Error(t, k.c.SyncKey(t.Context(), "team-a/shard-1"))
	assert.Empty(t, k.Host.Writes(k.Ours.Actions()))
	s, err = k.Ours.OperatorV1alpha1().Shards("team-a").Get(t.Context(), "shard-1", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, first, condition(s, operatorv1alpha1.ConditionDeregistered))
}
