package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestBackup: the command posts an EtcdSnapshotRequest to the backup subresource and prints
// the name answered; with --wait it reads the status until status.etcd.snapshots lists it.
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
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"apiVersion":"operator.kcp.io/v1alpha1","kind":"EtcdSnapshotRequest","metadata":{"name":"alpha"},"status":{"snapshot":%q,"requestTime":"2026-11-29T01:15:00Z"}}`, name)
			return
		}
		gets++
		etcd := fmt.Sprintf(`{"pendingSnapshot":{"name":%q,"requestTime":"2026-11-29T01:15:00Z"}}`, name)
		if gets > 1 {
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
		"GET /apis/operator.kcp.io/v1alpha1/namespaces/team-a/shards/alpha",
	}, requests, "read until it is listed")

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
