package shard

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// joinedFixture is shard-1 joined by spec.rootShard.secretRef to a copy of kcp-system/root's
// shard-join Secret, named root-shard-join in team-a; no RootShard exists in team-a.
type joinedFixture struct {
	*fixture
	in *controllertest.Installation
}

func newJoinedFixture(t *testing.T) *joinedFixture {
	f := newFixture(t)
	s, err := kinds.Shard.Lister(f.c.Indexes, "team-a").Get("shard-1")
	require.NoError(t, err)
	s = s.DeepCopy()
	s.Spec.RootShard = operatorv1alpha1.RootShardConfig{SecretRef: &corev1.LocalObjectReference{Name: "root-shard-join"}}
	require.NoError(t, f.Caches.Shards.Update(s))
	_, err = f.Ours.OperatorV1alpha1().Shards("team-a").Update(t.Context(), s, metav1.UpdateOptions{})
	require.NoError(t, err)
	f.Ours.ClearActions()
	j := &joinedFixture{fixture: f, in: controllertest.NewInstallation(t)}
	return j
}

// converge syncs as the host catches up in between, and returns the Shard.
func (j *joinedFixture) converge(t *testing.T) *operatorv1alpha1.Shard {
	for range 4 {
		j.sync(t)
		j.Host.CatchUp(t)
	}
	return j.sync(t)
}

func (j *joinedFixture) drainEvents() []string { return controllertest.Events(j.Events) }

// TestJoinedShardIsRealizedFromItsCopy: a Shard joined by a copy of shard-join writes local
// copies of the RootShard's CAs behind local Issuers, issues its certificates from them,
// reaches the root shard at the copy's URL, never mounts a CA key, and is not observed in
// kcp.
func TestJoinedShardIsRealizedFromItsCopy(t *testing.T) {
	j := newJoinedFixture(t)
	j.Host.PutReference(t, j.in.Copies[reference.ShardJoin])
	// A kcp stand-in: the server has no identity toward the joined root shard's kcp, so it
	// must not ask it anything.
	k := controllertest.NewKcp(t)
	health := kcphealth.NewPoller(time.Hour)
	j.Host.Kcp, j.Host.KcpHealth = k, health

	j.converge(t)
	health.Wait()
	s := j.sync(t)

	assert.Equal(t, operatorv1alpha1.PhaseRunning, s.Status.Phase, "conditions: %+v", s.Status.Conditions)
	ref := condition(s, operatorv1alpha1.ConditionReferenceValid)
	assert.Equal(t, metav1.ConditionTrue, ref.Status)
	assert.Equal(t, operatorv1alpha1.ReasonReferencesFound, ref.Reason)
	assert.Empty(t, condition(s, operatorv1alpha1.ConditionKcpReady).Type, "no KcpReady for a joined Shard")
	assert.Empty(t, k.Requests(), "kcp is not asked about a joined Shard")

	j.in.AssertJoined(t, j.Host, shard.Kind, "shard-1", reference.ShardJoin)
	for _, name := range []string{"root-ca", "root-merged-client-ca", "root-merged-ca-bundle"} {
		_, exists, err := j.Host.Caches["secrets"].GetByKey("team-a/" + name)
		require.NoError(t, err)
		assert.False(t, exists, "nothing is written under the real RootShard's names: %s", name)
	}

	// The root shard at the copy's root-shard-url.
	controllertest.AssertKubeconfigServer(t, j.Host.Secret(t, "team-a", shard.ClientKubeconfigName(s)), controllertest.InstallationRootShardURL)

	deployments := j.Host.Caches["deployments"].List()
	require.Len(t, deployments, 1)
	controllertest.AssertTrustMounted(t, deployments[0].(*appsv1.Deployment), shard.Kind, "shard-1", reference.ShardJoin)
}

// TestJoinedShardWithoutItsCopySaysSoAndHeals: until the copy is there, the Shard says which
// Secret it waits for and nothing is written; the copy appearing heals it.
func TestJoinedShardWithoutItsCopySaysSoAndHeals(t *testing.T) {
	j := newJoinedFixture(t)
	s := j.sync(t)
	controllertest.AssertReferenceInvalid(t, s.Status.Conditions, operatorv1alpha1.ReasonReferenceSecretNotFound, "root-shard-join")
	assert.Equal(t, operatorv1alpha1.PhaseProvisioning, s.Status.Phase)
	assert.Equal(t, []string{"update shards/status"}, j.Host.Writes(j.Ours.Actions()), "nothing is realized without the copy")
	assert.Equal(t, metav1.ConditionFalse, condition(s, operatorv1alpha1.ConditionRootShard).Status)
	assert.Equal(t, "InvalidReference", condition(s, operatorv1alpha1.ConditionRootShard).Reason, "kcp-operator's RootShard condition")

	j.Host.PutReference(t, j.in.Copies[reference.ShardJoin])
	s = j.converge(t)
	assert.True(t, condition(s, operatorv1alpha1.ConditionReferenceValid).Status == metav1.ConditionTrue, "conditions: %+v", s.Status.Conditions)
	assert.Equal(t, "Valid", condition(s, operatorv1alpha1.ConditionRootShard).Reason, "conditions: %+v", s.Status.Conditions)
	assert.Equal(t, operatorv1alpha1.PhaseRunning, s.Status.Phase, "conditions: %+v", s.Status.Conditions)
	assert.Len(t, j.Host.Caches["deployments"].List(), 1)
}

// TestJoinedShardWithAnUnlabelledCopySaysHowToLabelIt: a copy without the reference label
// is not in the cache of copies. The Shard tells it from a missing copy: ReferenceValid says
// the Secret is there without the label, with the command that labels it, in an Event too,
// and nothing is realized; the label added heals it (the copy then enters the cache of
// copies, whose event enqueues the Shard: TestCopiesEnqueueTheShardsNamingThem).
func TestJoinedShardWithAnUnlabelledCopySaysHowToLabelIt(t *testing.T) {
	j := newJoinedFixture(t)
	s := j.sync(t)
	controllertest.AssertReferenceInvalid(t, s.Status.Conditions, operatorv1alpha1.ReasonReferenceSecretNotFound, "root-shard-join")
	assert.Equal(t, "Secret team-a/root-shard-join not found", condition(s, operatorv1alpha1.ConditionReferenceValid).Message)
	j.drainEvents()
	j.Ours.ClearActions()

	j.Host.PutReference(t, controllertest.Unlabelled(j.in.Copies[reference.ShardJoin]))
	s = j.sync(t)
	ref := condition(s, operatorv1alpha1.ConditionReferenceValid)
	assert.Equal(t, metav1.ConditionFalse, ref.Status)
	assert.Equal(t, operatorv1alpha1.ReasonReferenceSecretNotLabelled, ref.Reason)
	assert.Equal(t, "Secret team-a/root-shard-join exists but is not labelled operator.kcp.io/reference, and the server reads only labelled copies: "+
		"kubectl label secret root-shard-join -n team-a operator.kcp.io/reference=shard-join", ref.Message)
	controllertest.AssertReferenceNotLabelled(t, s.Status.Conditions, "root-shard-join", reference.ShardJoin)
	assert.Equal(t, operatorv1alpha1.PhaseProvisioning, s.Status.Phase)
	assert.Equal(t, []string{"update shards/status"}, j.Host.Writes(j.Ours.Actions()), "nothing is realized from a copy the server does not see")
	events := j.drainEvents()
	assert.Contains(t, events, "Warning "+operatorv1alpha1.ReasonReferenceSecretNotLabelled+" "+ref.Message)
	j.in.AssertNoKeyMaterial(t, s.Status.Conditions, events)

	// Another sync says it once: no second Event, no write.
	j.Ours.ClearActions()
	j.sync(t)
	assert.Empty(t, j.Host.Writes(j.Ours.Actions()))
	assert.Empty(t, j.drainEvents())

	j.Host.PutReference(t, j.in.Copies[reference.ShardJoin])
	s = j.converge(t)
	assert.Equal(t, metav1.ConditionTrue, condition(s, operatorv1alpha1.ConditionReferenceValid).Status, "conditions: %+v", s.Status.Conditions)
	assert.Equal(t, operatorv1alpha1.PhaseRunning, s.Status.Phase, "conditions: %+v", s.Status.Conditions)
	assert.Len(t, j.Host.Caches["deployments"].List(), 1)
}

// TestJoinedShardWithACopyOfAnotherKindSaysSo: a copy of another reference Secret under the
// name is refused with a message naming the Secret, no content, and nothing is written.
func TestJoinedShardWithACopyOfAnotherKindSaysSo(t *testing.T) {
	j := newJoinedFixture(t)
	j.Host.PutReference(t, j.in.CopyAs(reference.KubeconfigIssuer, "root-shard-join"))

	s := j.sync(t)
	controllertest.AssertReferenceInvalid(t, s.Status.Conditions, operatorv1alpha1.ReasonReferenceSecretInvalid, "root-shard-join")
	assert.Equal(t, operatorv1alpha1.PhaseProvisioning, s.Status.Phase)
	assert.Equal(t, []string{"update shards/status"}, j.Host.Writes(j.Ours.Actions()), "nothing is realized from a copy that cannot be used")
	events := j.drainEvents()
	assert.True(t, slices.ContainsFunc(events, func(e string) bool {
		return strings.HasPrefix(e, "Warning "+operatorv1alpha1.ReasonReferenceSecretInvalid) && strings.Contains(e, "team-a/root-shard-join")
	}), "events: %v", events)
	j.in.AssertNoKeyMaterial(t, s.Status.Conditions, events)
}

// TestJoinedShardKeepsWhatItRealizedWhenItsCopyBreaks: a copy that becomes unusable (a key
// removed) is reported, and what a good copy realized stays: nothing is deleted or rewritten.
func TestJoinedShardKeepsWhatItRealizedWhenItsCopyBreaks(t *testing.T) {
	j := newJoinedFixture(t)
	j.Host.PutReference(t, j.in.Copies[reference.ShardJoin])
	j.converge(t)
	j.Host.Reset()
	j.Ours.ClearActions()
	j.drainEvents()

	broken := j.in.Copies[reference.ShardJoin].DeepCopy()
	delete(broken.Data, reference.KeyKey(pki.ServerCA))
	broken.ResourceVersion = "2"
	j.Host.PutReference(t, broken)
	s := j.sync(t)
	ref := condition(s, operatorv1alpha1.ConditionReferenceValid)
	assert.Equal(t, operatorv1alpha1.ReasonReferenceSecretInvalid, ref.Reason)
	assert.Contains(t, ref.Message, reference.KeyKey(pki.ServerCA), "names the key at fault")
	assert.Equal(t, []string{"update shards/status"}, j.Host.Writes(j.Ours.Actions()))
	j.Host.Secret(t, "team-a", pki.CAName("shard-1-shard-root", pki.ServerCA))
	assert.Len(t, j.Host.Caches["deployments"].List(), 1)
	j.in.AssertNoKeyMaterial(t, s.Status.Conditions, j.drainEvents())
}

// TestDeletedJoinedShardIsNotDeregistered: the server has no identity toward a joined root
// shard's kcp: deleting the Shard never reaches kcp, says so in an Event, and lets it go.
func TestDeletedJoinedShardIsNotDeregistered(t *testing.T) {
	j := newJoinedFixture(t)
	j.Host.PutReference(t, j.in.Copies[reference.ShardJoin])
	j.converge(t)
	k := controllertest.NewKcp(t)
	k.Shards["shard-1"] = "https://shard-1-shard-kcp.team-a.svc.cluster.local:6443"
	j.Host.Kcp, j.Host.KcpHealth = k, kcphealth.NewPoller(time.Hour)
	j.drainEvents()
	j.Host.Reset()
	j.Ours.ClearActions()

	s, err := kinds.Shard.Lister(j.c.Indexes, "team-a").Get("shard-1")
	require.NoError(t, err)
	s = s.DeepCopy()
	s.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	require.NoError(t, j.Caches.Shards.Update(s))

	require.NoError(t, j.c.SyncKey(t.Context(), "team-a/shard-1"))
	assert.Empty(t, k.Requests(), "kcp is never reached")
	assert.Contains(t, k.Shards, "shard-1")
	assert.Contains(t, j.Host.Writes(), "delete-collection deployments/", "its workloads go")
	got, err := j.Ours.OperatorV1alpha1().Shards("team-a").Get(t.Context(), "shard-1", metav1.GetOptions{})
	require.NoError(t, err)
	assert.NotContains(t, got.Finalizers, kinds.Shard.Finalizer())
	events := j.drainEvents()
	assert.True(t, slices.ContainsFunc(events, func(e string) bool {
		return strings.HasPrefix(e, "Normal DeregistrationSkipped") && strings.Contains(e, "shard-join")
	}), "events: %v", events)
}
