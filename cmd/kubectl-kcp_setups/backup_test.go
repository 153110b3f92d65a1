package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestBackup: the command posts an EtcdSnapshotRequest to the backup subresource and prints
// the name answered; with --wait it reads the status until status.etcd.snapshots lists it,
// and the Events while it is pending, until they are forbidden.
func TestBackup(t *testing.T) {
	const name = "alpha-shard-20261129-011500"
	var mu sync.Mutex
	var requests []string
	gets := 0
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		requests = append(requests, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/events") {
			// Who may ask for a snapshot need not read Events: --wait reads the status alone.
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"apiVersion":"v1","kind":"Status","status":"Failure","reason":"Forbidden","code":403,"message":"events is forbidden"}`)
			return
		}
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"apiVersion":"operator.kcp.io/v1alpha1","kind":"EtcdSnapshotRequest","metadata":{"name":"alpha"},"status":{"snapshot":%q,"requestTime":"2026-11-29T01:15:00Z"}}`, name)
			return
		}
		gets++
		etcd := fmt.Sprintf(`{"pendingSnapshot":{"name":%q,"requestTime":"2026-11-29T01:15:00Z"}}`, name)
		if gets > 2 {
			etcd = fmt.Sprintf(`{"snapshots":[{"name":%q,"time":"2026-11-29T01:15:01Z","revision":1,"size":1,"sha256":"x","store":"volume","onDemand":true}]}`, name)
		}
		fmt.Fprintf(w, `{"apiVersion":"operator.kcp.io/v1alpha1","kind":"Shard","metadata":{"name":"alpha"},"status":{"etcd":%s}}`, etcd)
	}))
	defer server.Close()

	var stdout, stderr bytes.Buffer
	code := run([]string{"backup", "shard/alpha", "--server", server.URL, "-n", "team-a", "--wait", "--poll-interval", "10ms"}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.Equal(t, name+"\n", stdout.String())
	assert.Equal(t, []string{
		"POST /apis/operator.kcp.io/v1alpha1/namespaces/team-a/shards/alpha/backup",
		"GET /apis/operator.kcp.io/v1alpha1/namespaces/team-a/shards/alpha",
		"GET /api/v1/namespaces/team-a/events",
		"GET /apis/operator.kcp.io/v1alpha1/namespaces/team-a/shards/alpha",
		"GET /apis/operator.kcp.io/v1alpha1/namespaces/team-a/shards/alpha",
	}, requests, "read until it is listed, and its Events while it is pending, unless they are forbidden")

	// Without --wait, the request alone; a refusal reads as kubectl's.
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, `{"apiVersion":"v1","kind":"Status","status":"Failure","reason":"Conflict","code":409,"message":"Operation cannot be fulfilled on rootshards.operator.kcp.io \"root\": the snapshot root-20261129-011500, asked for at 2026-11-29T01:15:00Z, is not taken yet"}`)
	}))
	defer refusing.Close()
	stdout.Reset()
	stderr.Reset()
	assert.Equal(t, 1, run([]string{"backup", "rootshard/root", "--server", refusing.URL}, &stdout, &stderr))
	assert.Empty(t, stdout.String())
	assert.True(t, strings.HasPrefix(stderr.String(), "Error from server (Conflict): "), stderr.String())
	assert.Contains(t, stderr.String(), "root-20261129-011500")

	assert.Equal(t, 1, run([]string{"backup", "cacheserver/cs", "--server", server.URL}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), `resource type "cacheserver" here: one of rootshard, shard`)
}

// TestSnapshotTaken: listed is done; pending or no status yet, not yet; neither pending nor
// listed, given up.
func TestSnapshotTaken(t *testing.T) {
	const name = "root-20261129-011500"
	for _, tc := range []struct {
		name   string
		status *operatorv1alpha1.ManagedEtcdStatus
		done   bool
		gaveUp bool
	}{
		{"no status yet", nil, false, false},
		{"pending", &operatorv1alpha1.ManagedEtcdStatus{PendingSnapshot: &operatorv1alpha1.EtcdPendingSnapshot{Name: name}}, false, false},
		{"listed", &operatorv1alpha1.ManagedEtcdStatus{Snapshots: []operatorv1alpha1.EtcdSnapshotInfo{{Name: "root-20261128-000000"}, {Name: name}}}, true, false},
		{"another pending, this one not listed", &operatorv1alpha1.ManagedEtcdStatus{PendingSnapshot: &operatorv1alpha1.EtcdPendingSnapshot{Name: "root-20261129-020000"}}, false, true},
		{"neither", &operatorv1alpha1.ManagedEtcdStatus{}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, err := snapshotTaken(tc.status, name)
			assert.Equal(t, tc.done, done)
			if tc.gaveUp {
				assert.ErrorContains(t, err, "was not taken")
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

// TestBackupWaitReportsAFailedTake: with --wait, a SnapshotFailed Event of the take of the
// snapshot asked for, on the object, fails the command with its message, while the snapshot
// is still pending; the Events are asked for by the object's kind and name and the reason.
func TestBackupWaitReportsAFailedTake(t *testing.T) {
	const name = "root-20261129-011500"
	var eventsQuery string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost:
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"apiVersion":"operator.kcp.io/v1alpha1","kind":"EtcdSnapshotRequest","metadata":{"name":"root"},"status":{"snapshot":%q,"requestTime":"2026-11-29T01:15:00Z"}}`, name)
		case strings.HasSuffix(r.URL.Path, "/events"):
			eventsQuery = r.URL.Query().Get("fieldSelector")
			fmt.Fprintf(w, `{"apiVersion":"v1","kind":"EventList","items":[
				{"metadata":{"name":"a"},"reason":"SnapshotFailed","type":"Warning","message":"Taking snapshot %s failed: agent unreachable","lastTimestamp":"2026-11-29T01:15:01Z"}
			]}`, name)
		default:
			fmt.Fprintf(w, `{"apiVersion":"operator.kcp.io/v1alpha1","kind":"RootShard","metadata":{"name":"root"},"status":{"etcd":{"pendingSnapshot":{"name":%q,"requestTime":"2026-11-29T01:15:00Z"}}}}`, name)
		}
	}))
	defer server.Close()

	var stdout, stderr bytes.Buffer
	code := run([]string{"backup", "rootshard/root", "--server", server.URL, "-n", "kcp", "--wait", "--poll-interval", "10ms", "--timeout", "1m"}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Equal(t, name+"\n", stdout.String())
	assert.Contains(t, stderr.String(), "rootshard/root: Taking snapshot "+name+" failed: agent unreachable")
	assert.Equal(t, "involvedObject.kind=RootShard,involvedObject.name=root,reason=SnapshotFailed", eventsQuery)
}

// TestSnapshotFailure: the newest SnapshotFailed Event that names the snapshot and was seen
// since the request (to the second); none for another snapshot's, the scheduled one's, an
// older one's or another reason's.
func TestSnapshotFailure(t *testing.T) {
	const name = "root-20261129-011500"
	requested := time.Date(2026, 11, 29, 1, 15, 0, 500_000_000, time.UTC)
	at := func(sec int) metav1.Time { return metav1.NewTime(time.Date(2026, 11, 29, 1, 15, sec, 0, time.UTC)) }
	failed := func(message string, seen metav1.Time) corev1.Event {
		return corev1.Event{Reason: "SnapshotFailed", Message: message, LastTimestamp: seen}
	}
	for _, tc := range []struct {
		name   string
		events []corev1.Event
		want   string
	}{
		{"none", nil, ""},
		{"this snapshot's, in the request's second", []corev1.Event{failed("Taking snapshot "+name+" failed: x", at(0))}, "Taking snapshot " + name + " failed: x"},
		{"the newest of two", []corev1.Event{
			failed("Taking snapshot "+name+" failed: second", at(9)), failed("Taking snapshot "+name+" failed: first", at(3)),
		}, "Taking snapshot " + name + " failed: second"},
		{"before the request", []corev1.Event{failed("Taking snapshot "+name+" failed: x", metav1.NewTime(requested.Add(-time.Minute)))}, ""},
		{"another snapshot's", []corev1.Event{failed("Taking snapshot root-20261129-011501 failed: x", at(5))}, ""},
		{"the scheduled one's", []corev1.Event{failed("Taking the scheduled snapshot failed: x", at(5))}, ""},
		{"another reason", []corev1.Event{{Reason: "SnapshotTaken", Message: "Taking snapshot " + name + " failed: x", LastTimestamp: at(5)}}, ""},
		{"seen last in its series", []corev1.Event{{Reason: "SnapshotFailed", Message: "Taking snapshot " + name + " failed: x",
			FirstTimestamp: at(-30), Series: &corev1.EventSeries{LastObservedTime: metav1.NewMicroTime(at(4).Time)}}}, "Taking snapshot " + name + " failed: x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, snapshotFailure(tc.events, name, requested))
		})
	}
}
