package shard

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kcphealth"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// baseURL is the address shard-1 registers itself with in kcp (--shard-base-url).
const baseURL = "https://shard-1-shard-kcp.team-a.svc.cluster.local:6443"

// shardUID is shard-1's UID, which marks kcp's Shard object registered for it.
const shardUID = "3f2c9d8e-0000-4000-8000-000000000001"

// kcpFixture is a realized, Running Shard whose kcp is a stand-in the test controls.
type kcpFixture struct {
	*fixture
	kcp    *controllertest.Kcp
	health *kcphealth.Poller
}

func newKcpFixture(t *testing.T, interval time.Duration) *kcpFixture {
	f := newFixture(t)
	f.addRootShard(t)
	for range 4 {
		f.sync(t)
		f.Host.CatchUp(t)
	}
	s := f.sync(t)
	require.Equal(t, operatorv1alpha1.PhaseRunning, s.Status.Phase, "conditions: %+v", s.Status.Conditions)
	require.Equal(t, baseURL, shard.Server(s, f.rootShard(t)).BaseURL())

	k := &kcpFixture{fixture: f, kcp: controllertest.NewKcp(t), health: kcphealth.NewPoller(interval)}
	controllertest.Events(f.Events) // those of the convergence
	k.kcp.Shards["shard-1"] = baseURL
	k.kcp.ShardUIDs["shard-1"] = shardUID // marked when it was found registered
	f.Host.Kcp, f.Host.KcpHealth = k.kcp, k.health
	f.c.Loop = controller.NewLoop(shard.Kind, f.c.SyncKey)
	t.Cleanup(f.c.Loop.Queue.ShutDown)
	f.Host.Reset()
	f.Ours.ClearActions()
	return k
}

func (f *fixture) rootShard(t *testing.T) *operatorv1alpha1.RootShard {
	rs, err := kinds.RootShard.Lister(f.c.Indexes, "team-a").Get("root")
	require.NoError(t, err)
	return rs
}

// check syncs, lets the kcp check that sync started end, and syncs again to read it.
func (k *kcpFixture) check(t *testing.T) *operatorv1alpha1.Shard {
	k.sync(t)
	k.health.Wait()
	return k.sync(t)
}

func (k *kcpFixture) drainEvents() []string { return controllertest.Events(k.Events) }

func condition(s *operatorv1alpha1.Shard, t string) metav1.Condition {
	if c := meta.FindStatusCondition(s.Status.Conditions, t); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// TestShardKcpReady: KcpReady says what kcp answers, for every way it can answer; Available
// and the phase stay the Deployment's.
func TestShardKcpReady(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kcp     func(k *controllertest.Kcp)
		status  metav1.ConditionStatus
		reason  string
		message []string
		event   string
	}{
		{"ready", func(*controllertest.Kcp) {}, metav1.ConditionTrue, "Ready",
			[]string{`its Shard "shard-1" is registered`}, "Normal KcpReady"},
		{"readyz fails, its failing checks are the message", func(k *controllertest.Kcp) {
			k.NotReady["shard-1"] = controllertest.Readyz{Status: 500,
				Body: "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n[-]informer-sync failed: reason withheld\nreadyz check failed\n"}
		}, metav1.ConditionFalse, "NotReady", []string{"answered 500", "[-]etcd failed: reason withheld; [-]informer-sync failed"}, "Warning KcpNotReady"},
		{"readyz fails without saying which check", func(k *controllertest.Kcp) {
			k.NotReady["shard-1"] = controllertest.Readyz{Status: 503, Body: "starting up\nplease wait\n"}
		}, metav1.ConditionFalse, "NotReady", []string{"answered 503: starting up; please wait"}, "Warning KcpNotReady"},
		{"unreachable", func(k *controllertest.Kcp) { k.Down = true }, metav1.ConditionFalse, "KcpUnreachable",
			[]string{"kcp cannot be reached", "/shards/shard-1/readyz"}, "Warning KcpUnreachable"},
		{"refused", func(k *controllertest.Kcp) { k.Status = http.StatusForbidden }, metav1.ConditionFalse, "KcpRefused",
			[]string{"refused the server's identity (403)"}, "Warning KcpRefused"},
		{"credentials not issued", func(k *controllertest.Kcp) { k.NoCredentials = true }, metav1.ConditionFalse, "WaitingForCredentials",
			[]string{"root-kcp-operator is not issued yet"}, "Warning WaitingForCredentials"},
		{"not registered", func(k *controllertest.Kcp) { delete(k.Shards, "shard-1") }, metav1.ConditionFalse, "ShardNotRegistered",
			[]string{`no Shard "shard-1"`}, "Warning ShardNotRegistered"},
		{"registered elsewhere", func(k *controllertest.Kcp) { k.Shards["shard-1"] = "https://old:6443" }, metav1.ConditionFalse, "ShardNotRegistered",
			[]string{`routes to "https://old:6443", not to this shard's "` + baseURL + `"`}, "Warning ShardNotRegistered"},
		{"registered at this address for another Shard", func(k *controllertest.Kcp) { k.ShardUIDs["shard-1"] = "other-uid" }, metav1.ConditionFalse, "ShardNotRegistered",
			[]string{`was registered for another Shard (operator.kcp.io/shard-uid other-uid)`}, "Warning ShardNotRegistered"},
		{"registered at this address, not marked yet: marked with this Shard's UID", func(k *controllertest.Kcp) { delete(k.ShardUIDs, "shard-1") },
			metav1.ConditionTrue, "Ready", []string{`its Shard "shard-1" is registered`}, "Normal KcpReady"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKcpFixture(t, time.Hour)
			k.kcp.Set(tc.kcp)
			s := k.check(t)
			c := condition(s, operatorv1alpha1.ConditionKcpReady)
			assert.Equal(t, tc.status, c.Status)
			assert.Equal(t, tc.reason, c.Reason)
			for _, m := range tc.message {
				assert.Contains(t, c.Message, m)
			}
			assert.True(t, meta.IsStatusConditionTrue(s.Status.Conditions, operatorv1alpha1.ConditionAvailable), "Available stays the Deployment's")
			assert.True(t, meta.IsStatusConditionTrue(s.Status.Conditions, operatorv1alpha1.ConditionSynced), "kcp's answer is no failure of the host side")
			assert.Equal(t, operatorv1alpha1.PhaseRunning, s.Status.Phase)
			events := k.drainEvents()
			require.Len(t, events, 1)
			assert.True(t, strings.HasPrefix(events[0], tc.event), events[0])
			if tc.status == metav1.ConditionTrue {
				assert.Equal(t, shardUID, k.kcp.ShardUIDs["shard-1"], "kcp's Shard carries the Shard's UID")
			}
		})
	}
}

// TestShardKcpReadyFollowsKcp: KcpReady goes down and up with kcp, an Event each time; a poll
// that finds nothing changed writes nothing; the key comes back for the next poll.
func TestShardKcpReadyFollowsKcp(t *testing.T) {
	k := newKcpFixture(t, 50*time.Millisecond)
	s := k.sync(t)
	assert.Equal(t, operatorv1alpha1.ReasonKcpChecking, condition(s, operatorv1alpha1.ConditionKcpReady).Reason, "before kcp answered")
	k.health.Wait()
	require.Equal(t, 1, k.c.Loop.Queue.Len(), "the end of a check brings the key back")
	key, _ := k.c.Loop.Queue.Get()
	k.c.Loop.Queue.Done(key)
	s = k.sync(t)
	assert.Equal(t, metav1.ConditionTrue, condition(s, operatorv1alpha1.ConditionKcpReady).Status)
	assert.Equal(t, 0, k.c.Loop.Queue.Len())
	assert.Eventually(t, func() bool { return k.c.Loop.Queue.Len() == 1 }, 5*time.Second, 10*time.Millisecond,
		"the key comes back after the interval, for the next poll")

	// Polls that find kcp as it was write nothing.
	k.Host.Reset()
	k.Ours.ClearActions()
	before := len(k.kcp.Requests())
	for range 2 {
		time.Sleep(60 * time.Millisecond)
		k.check(t)
	}
	assert.Greater(t, len(k.kcp.Requests()), before, "kcp was asked again")
	assert.Empty(t, k.Host.Writes(k.Ours.Actions()), "no status write when nothing changed")

	k.kcp.Set(func(k *controllertest.Kcp) { k.Down = true })
	time.Sleep(60 * time.Millisecond)
	s = k.check(t)
	unreachable := condition(s, operatorv1alpha1.ConditionKcpReady)
	assert.Equal(t, operatorv1alpha1.ReasonKcpUnreachable, unreachable.Reason)

	// Still unreachable, another way (a timeout instead of a closed connection): the
	// condition stands as it was, with no write.
	k.health.Timeout = 20 * time.Millisecond
	release := make(chan struct{})
	k.kcp.Set(func(kcp *controllertest.Kcp) { kcp.Down, kcp.OnRequest = false, func(*http.Request) { <-release } })
	k.Host.Reset()
	k.Ours.ClearActions()
	time.Sleep(60 * time.Millisecond)
	s = k.check(t)
	close(release)
	assert.Equal(t, unreachable, condition(s, operatorv1alpha1.ConditionKcpReady))
	assert.Empty(t, k.Host.Writes(k.Ours.Actions()), "no status write while kcp stays unreachable")

	k.kcp.Set(func(k *controllertest.Kcp) { k.OnRequest = nil })
	time.Sleep(60 * time.Millisecond)
	s = k.check(t)
	assert.Equal(t, metav1.ConditionTrue, condition(s, operatorv1alpha1.ConditionKcpReady).Status)
	events := k.drainEvents()
	require.Len(t, events, 3)
	assert.True(t, strings.HasPrefix(events[0], "Normal KcpReady"))
	assert.True(t, strings.HasPrefix(events[1], "Warning KcpUnreachable"))
	assert.True(t, strings.HasPrefix(events[2], "Normal KcpReady"))
}

// TestShardKcpNotAskedWhileTheDeploymentIsUnavailable: a kcp whose pods are not ready is not
// asked; KcpReady says why, and kcp is asked again, at once, once they are.
func TestShardKcpNotAskedWhileTheDeploymentIsUnavailable(t *testing.T) {
	k := newKcpFixture(t, time.Hour)
	s := k.check(t)
	require.Equal(t, metav1.ConditionTrue, condition(s, operatorv1alpha1.ConditionKcpReady).Status)
	asked := len(k.kcp.Requests())

	obj, exists, err := k.Host.Caches["deployments"].GetByKey("team-a/shard-1-shard-kcp")
	require.NoError(t, err)
	require.True(t, exists)
	rolling := obj.(*appsv1.Deployment).DeepCopy()
	rolling.Status.ReadyReplicas, rolling.Status.AvailableReplicas = 0, 0
	require.NoError(t, k.Host.Caches["deployments"].Update(rolling))
	s = k.check(t)
	c := condition(s, operatorv1alpha1.ConditionKcpReady)
	assert.Equal(t, metav1.ConditionUnknown, c.Status)
	assert.Equal(t, operatorv1alpha1.ReasonWaitingForDeployment, c.Reason)
	assert.Equal(t, asked, len(k.kcp.Requests()), "kcp is not asked while its Deployment is unavailable")

	k.Host.CatchUp(t)
	s = k.check(t)
	assert.Equal(t, metav1.ConditionTrue, condition(s, operatorv1alpha1.ConditionKcpReady).Status)
	assert.Greater(t, len(k.kcp.Requests()), asked, "asked at once, not an interval later")
}

// TestShardKcpThatHangsHoldsNothing: a kcp that does not answer holds neither the reconcile
// nor its host-side writes, and is unreachable once the check's timeout passed.
func TestShardKcpThatHangsHoldsNothing(t *testing.T) {
	k := newKcpFixture(t, time.Hour)
	k.health.Timeout = 200 * time.Millisecond
	release := make(chan struct{})
	k.kcp.Set(func(kcp *controllertest.Kcp) { kcp.OnRequest = func(*http.Request) { <-release } })
	t.Cleanup(func() { close(release); k.health.Wait() })

	start := time.Now()
	k.sync(t) // starts a check, which hangs
	s, err := kinds.Shard.Lister(k.c.Indexes, "team-a").Get("shard-1")
	require.NoError(t, err)
	s = s.DeepCopy()
	s.Spec.ShardBaseURL = "https://shard-1.example.com:6443"
	s.Generation = 2
	require.NoError(t, k.Caches.Shards.Update(s))
	s = k.sync(t)
	assert.Less(t, time.Since(start), 150*time.Millisecond, "the reconciles do not wait for kcp")
	assert.Contains(t, k.Host.Writes(), "Deployment shard-1-shard-kcp", "the host side is realized")
	assert.True(t, meta.IsStatusConditionTrue(s.Status.Conditions, operatorv1alpha1.ConditionSynced))

	k.Host.CatchUp(t) // the changed Deployment rolls out
	s = k.check(t)
	c := condition(s, operatorv1alpha1.ConditionKcpReady)
	assert.Equal(t, operatorv1alpha1.ReasonKcpUnreachable, c.Reason)
	assert.Contains(t, c.Message, "deadline exceeded")
}

// TestShardKcpReadyWithoutADialer: a server told that no kcp can be reached
// (--kcp-dialer=none) says so in KcpReady, Unknown, without asking kcp or retrying, and no
// Warning Event says that kcp failed.
func TestShardKcpReadyWithoutADialer(t *testing.T) {
	k := newKcpFixture(t, time.Hour)
	k.Host.NoKcpDialer = true
	s := k.check(t)
	c := condition(s, operatorv1alpha1.ConditionKcpReady)
	assert.Equal(t, metav1.ConditionUnknown, c.Status)
	assert.Equal(t, operatorv1alpha1.ReasonNoKcpDialer, c.Reason)
	assert.Equal(t, "asking kcp whether it is ready: "+kcpclient.ErrNoDialer.Error(), c.Message)
	assert.Equal(t, operatorv1alpha1.PhaseRunning, s.Status.Phase, "the phase stays the Deployment's")
	assert.Empty(t, k.kcp.Requests(), "kcp is not asked")
	assert.Zero(t, k.c.Loop.Queue.Len(), "nothing is due again")
	for _, e := range k.drainEvents() {
		assert.False(t, strings.HasPrefix(e, "Warning"), e)
	}
}
