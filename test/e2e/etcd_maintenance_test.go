package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/test/framework"
)

// maintainedEtcdSetup is a RootShard whose managed etcd has a small quota, and defragments a
// member from 1 MiB once half its database is free.
const maintainedEtcdSetup = `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata:
  name: small
spec:
  external:
    hostname: kcp.example.com
    port: 6443
  etcd:
    managed:
      replicas: 3
      quota: 16Mi
      defragmentation:
        thresholdPercent: 50
        minimumSize: 1Mi
`

const etcdQuota = 16 << 20

// TestEtcdAlarmAndDefrag is issue 42's item 4 end to end, with the members run for real: a
// small quota filled until etcd raises NOSPACE makes EtcdReady False with the alarm and an
// Event; the server compacts and defragments the members one at a time (their own logs say
// when each defragmentation ran, and none overlaps another) and disarms the alarm, after
// which EtcdReady is True and etcd accepts writes again; status.etcd shows every member's
// sizes. Then a member fragmented by deletions is defragmented routinely, one at a time too.
func TestEtcdAlarmAndDefrag(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "etcd-maintenance")
	members := givenManagedEtcd(t, ns, "small", maintainedEtcdSetup)
	waitForReason(t, ns, "rootshard/small", "EtcdReady", "True", "Healthy")
	for _, m := range members.Members() {
		assert.Contains(t, m.Args, fmt.Sprintf("--quota-backend-bytes=%d", etcdQuota), "member %s runs with the quota", m.Name)
	}

	secret := hostSecret(t, ns, "small-etcd-client")
	tlsConfig, err := framework.EtcdTLSConfig(&secret)
	require.NoError(t, err)
	client, err := framework.EtcdClient(members.ClientURLs(), tlsConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })

	var leader string
	t.Run("StatusShowsEveryMember", func(t *testing.T) {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			status := etcdStatus(t, ns)
			require.Len(c, status.Members, 3)
			leaders := 0
			for i, m := range status.Members {
				assert.Equal(c, fmt.Sprintf("small-etcd-%d", i), m.Name)
				assert.Positive(c, m.DatabaseSize, "%s has a size", m.Name)
				assert.Positive(c, m.DatabaseSizeInUse, "%s has a size in use", m.Name)
				assert.Empty(c, m.Error)
				if m.Leader {
					leaders++
					leader = m.Name
				}
			}
			assert.Equal(c, 1, leaders, "one member leads")
		}, time.Minute, time.Second)
	})

	filled := time.Now()
	t.Run("NoSpaceIsAnAlarm", func(t *testing.T) {
		// Revisions of one key, which a compaction frees: the quota is reached with little
		// data in use.
		value := strings.Repeat("x", 512<<10)
		var putErr error
		for i := 0; i < 200 && putErr == nil; i++ {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			_, putErr = client.Put(ctx, "/fill", value)
			cancel()
		}
		require.ErrorIs(t, putErr, rpctypes.ErrNoSpace, "etcd refuses writes past its quota")
		waitForReason(t, ns, "rootshard/small", "EtcdReady", "False", operatorv1alpha1.ReasonAlarmNoSpace)
		event := waitForEvent(t, ns, "EtcdAlarm", filled)
		assert.Equal(t, corev1.EventTypeWarning, event.Type)
		assert.Contains(t, event.Message, "etcd raised NOSPACE on member small-etcd-")
	})

	t.Run("TheServerClearsIt", func(t *testing.T) {
		waitForReason(t, ns, "rootshard/small", "EtcdReady", "True", "Healthy")
		waitForEvent(t, ns, "EtcdAlarmDisarmed", filled)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		_, err := client.Put(ctx, "/after", "accepted")
		require.NoError(t, err, "etcd accepts writes again")
		alarms, err := client.AlarmList(ctx)
		require.NoError(t, err)
		assert.Empty(t, alarms.Alarms, "no alarm is left")

		assertLeaderLast(t, ns, leader, assertOneAtATime(t, ns, members, filled))
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			status := etcdStatus(t, ns)
			require.Len(c, status.Members, 3)
			for _, m := range status.Members {
				assert.Less(c, m.DatabaseSize, int64(etcdQuota/2), "%s is defragmented", m.Name)
				assert.Empty(c, m.Alarms, "%s", m.Name)
				if assert.NotNil(c, m.LastDefragmentationTime, "%s", m.Name) {
					assert.False(c, m.LastDefragmentationTime.Time.Before(filled.Truncate(time.Second)), "%s", m.Name)
				}
			}
		}, time.Minute, time.Second)
	})

	t.Run("FragmentationIsDefragmented", func(t *testing.T) {
		// Many keys, deleted and compacted away: the members' databases are mostly free.
		value := strings.Repeat("y", 4<<10)
		for i := range 1500 {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			_, err := client.Put(ctx, fmt.Sprintf("/frag/%05d", i), value)
			cancel()
			require.NoError(t, err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		deleted, err := client.Delete(ctx, "/frag/", clientv3.WithPrefix())
		require.NoError(t, err)
		fragmented := time.Now()
		_, err = client.Compact(ctx, deleted.Header.Revision, clientv3.WithCompactPhysical())
		require.NoError(t, err)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			for _, m := range etcdStatus(t, ns).Members {
				if assert.NotNil(c, m.LastDefragmentationTime, "%s", m.Name) {
					assert.False(c, m.LastDefragmentationTime.Time.Before(fragmented.Truncate(time.Second)), "%s is defragmented again", m.Name)
				}
				assert.Less(c, m.DatabaseSize, int64(3<<20), "%s gave its free space back", m.Name)
			}
		}, 3*time.Minute, time.Second)
		assertLeaderLast(t, ns, leader, assertOneAtATime(t, ns, members, fragmented))
	})
}

// etcdStatus is the status.etcd of the RootShard small.
func etcdStatus(t *testing.T, ns string) operatorv1alpha1.ManagedEtcdStatus {
	t.Helper()
	var status operatorv1alpha1.ManagedEtcdStatus
	out := kubectl(t, "get", "rootshard/small", "-n", ns, "-o", "jsonpath={.status.etcd}")
	if out != "" {
		require.NoError(t, json.Unmarshal([]byte(out), &status))
	}
	return status
}

// waitForEvent waits for an Event of reason on the RootShard small, last seen at or after
// since, and returns it.
func waitForEvent(t *testing.T, ns, reason string, since time.Time) corev1.Event {
	t.Helper()
	var found corev1.Event
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		events, err := stack.Kube.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=small,reason=" + reason})
		require.NoError(c, err)
		for _, e := range events.Items {
			last := e.LastTimestamp.Time
			if last.IsZero() {
				last = e.EventTime.Time
			}
			if !last.Before(since.Truncate(time.Second)) {
				found = e
				return
			}
		}
		assert.Fail(c, "no Event "+reason)
	}, 3*time.Minute, time.Second)
	return found
}

// assertLeaderLast asserts that leader, the member that led before, was defragmented last,
// unless leadership moved meanwhile (the unit tests of the order cover any leader).
func assertLeaderLast(t *testing.T, ns, leader string, spans []defragmentation) {
	t.Helper()
	now := ""
	for _, m := range etcdStatus(t, ns).Members {
		if m.Leader {
			now = m.Name
		}
	}
	if now != leader || len(spans) == 0 {
		t.Logf("leadership moved from %s to %s: the leader's turn is not checked", leader, now)
		return
	}
	assert.Equal(t, leader, spans[len(spans)-1].member, "the leader is defragmented last")
}

// defragmentation is one defragmentation a member's log tells of.
type defragmentation struct {
	member     string
	start, end time.Time
}

// assertOneAtATime reads every member's own log for the defragmentations it ran since since
// (etcd logs "starting defragment" and "finished defragment" around each): each member ran
// one, and no two overlap.
func assertOneAtATime(t *testing.T, ns string, members *framework.EtcdMembers, since time.Time) []defragmentation {
	t.Helper()
	var spans []defragmentation
	for _, m := range members.Members() {
		starts, ends := defragmentations(t, stack.Path("logs", "etcd-"+ns+"-"+m.Name+".log"), since)
		require.NotEmpty(t, starts, "member %s logged a defragmentation", m.Name)
		require.Len(t, ends, len(starts), "member %s finished every defragmentation it started", m.Name)
		for i := range starts {
			spans = append(spans, defragmentation{m.Name, starts[i], ends[i]})
		}
	}
	slices.SortFunc(spans, func(a, b defragmentation) int { return a.start.Compare(b.start) })
	for i := 1; i < len(spans); i++ {
		assert.False(t, spans[i].start.Before(spans[i-1].end),
			"%s's defragmentation (%s) started before %s's (%s) ended", spans[i].member, spans[i].start, spans[i-1].member, spans[i-1].end)
	}
	for _, s := range spans {
		t.Logf("%s defragmented from %s to %s", s.member, s.start.Format(etcdLogTime), s.end.Format(etcdLogTime))
	}
	return spans
}

// etcdLogTime is the layout of the times in etcd's log.
const etcdLogTime = "2006-01-02T15:04:05.000000Z0700"

// defragmentations are the times of etcd's "starting defragment" and "finished defragment"
// lines in the log file path, at or after since.
func defragmentations(t *testing.T, path string, since time.Time) (starts, ends []time.Time) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		var line struct {
			TS  string `json:"ts"`
			Msg string `json:"msg"`
		}
		if json.Unmarshal(scanner.Bytes(), &line) != nil || (line.Msg != "starting defragment" && line.Msg != "finished defragment") {
			continue
		}
		ts, err := time.Parse(etcdLogTime, line.TS)
		require.NoError(t, err, "etcd's log time %q", line.TS)
		if ts.Before(since) {
			continue
		}
		if line.Msg == "starting defragment" {
			starts = append(starts, ts)
		} else {
			ends = append(ends, ts)
		}
	}
	require.NoError(t, scanner.Err())
	return starts, ends
}
