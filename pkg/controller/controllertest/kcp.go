package controllertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/kcpclient"
)

// Kcp is a stand-in for the kcp servers of RootShards and Shards in unit tests: one HTTP
// server that answers /readyz for each and serves kcp's Shard objects in the root
// workspace, which a test can make fail. It implements hostcluster.Kcp: a root shard's
// server is at /rootshards/<name> of it, a shard's at /shards/<name>.
type Kcp struct {
	Server *httptest.Server

	mu sync.Mutex
	// NotReady holds the /readyz answer of the servers that are not ready, by name: its
	// status code and body.
	NotReady map[string]Readyz
	// Shards are kcp's Shard objects in the root workspace: name to spec.baseURL.
	Shards map[string]string
	// ShardUIDs are the operator.kcp.io/shard-uid annotations of kcp's Shard objects, by
	// name; a merge patch of the annotation sets it.
	ShardUIDs map[string]string
	// Down makes every request fail without an answer (the connection is closed).
	Down bool
	// Status, when set, is the status every request is answered with (a 503, a 403).
	Status int
	// NoCredentials makes the configs fail as when the server's identity is not issued.
	NoCredentials bool
	// OnRequest, when set, is called with every request before it is answered.
	OnRequest func(r *http.Request)
	requests  []string
}

// Readyz is an answer of /readyz.
type Readyz struct {
	Status int
	Body   string
}

// NewKcp starts a kcp stand-in that answers ready for every server and has no Shard objects.
func NewKcp(t *testing.T) *Kcp {
	k := &Kcp{NotReady: map[string]Readyz{}, Shards: map[string]string{}, ShardUIDs: map[string]string{}}
	k.Server = httptest.NewServer(http.HandlerFunc(k.serve))
	t.Cleanup(k.Server.Close)
	return k
}

// Set changes the stand-in under its lock: for a test that changes it while a check runs.
func (k *Kcp) Set(change func(k *Kcp)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	change(k)
}

// Requests are the requests kcp received so far, as "METHOD path".
func (k *Kcp) Requests() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string{}, k.requests...)
}

// RootShard implements hostcluster.Kcp.
func (k *Kcp) RootShard(rs *operatorv1alpha1.RootShard, workspace string) (*rest.Config, error) {
	return k.config("/rootshards/"+rs.Name, workspace)
}

// RootShardProxy implements hostcluster.Kcp: the root shard proxy of rs is at
// /rootshardproxies/<name>.
func (k *Kcp) RootShardProxy(rs *operatorv1alpha1.RootShard, workspace string) (*rest.Config, error) {
	return k.config("/rootshardproxies/"+rs.Name, workspace)
}

// Shard implements hostcluster.Kcp.
func (k *Kcp) Shard(sh *operatorv1alpha1.Shard, _ *operatorv1alpha1.RootShard, workspace string) (*rest.Config, error) {
	return k.config("/shards/"+sh.Name, workspace)
}

// Etcd is the stand-in's /etcd/<service> as if it were the managed etcd of ep.
func (k *Kcp) Etcd(ep kcpclient.Endpoint, _ string) (*rest.Config, error) {
	return k.config("/etcd/"+ep.Service, "")
}

func (k *Kcp) config(base, workspace string) (*rest.Config, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.NoCredentials {
		return nil, &kcpclient.NotReadyError{Reason: "Secret team-a/root-kcp-operator is not issued yet"}
	}
	host := k.Server.URL + base
	if workspace != "" {
		host += "/clusters/" + workspace
	}
	return &rest.Config{Host: host}, nil
}

const shardsPath = "/clusters/root/apis/core.kcp.io/v1alpha1/shards/"

func (k *Kcp) serve(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	onRequest := k.OnRequest
	k.mu.Unlock()
	// Outside the lock: it may block, as a kcp that hangs.
	if onRequest != nil {
		onRequest(r)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.requests = append(k.requests, r.Method+" "+r.URL.Path)
	if k.Down {
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			_ = conn.Close()
		}
		return
	}
	if k.Status != 0 {
		writeStatus(w, k.Status, "kcp answers "+http.StatusText(k.Status))
		return
	}
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3) // kind, name, rest
	if len(parts) < 3 {
		http.NotFound(w, r)
		return
	}
	name, rest := parts[1], "/"+parts[2]
	switch {
	case rest == "/readyz" && r.Method == http.MethodGet:
		if nr, ok := k.NotReady[name]; ok {
			w.WriteHeader(nr.Status)
			_, _ = w.Write([]byte(nr.Body))
			return
		}
		_, _ = w.Write([]byte("ok"))
	case parts[0] == "rootshards" && strings.HasPrefix(rest, shardsPath):
		k.serveShard(w, r, strings.TrimPrefix(rest, shardsPath))
	default:
		http.NotFound(w, r)
	}
}

// serveShard serves kcp's Shard object name in the root workspace.
func (k *Kcp) serveShard(w http.ResponseWriter, r *http.Request, name string) {
	baseURL, ok := k.Shards[name]
	if !ok {
		writeStatus(w, http.StatusNotFound, fmt.Sprintf("shards.core.kcp.io %q not found", name))
		return
	}
	switch r.Method {
	case http.MethodGet:
		k.writeShard(w, name, baseURL)
	case http.MethodPatch:
		var patch struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := json.NewDecoder(r.Body).Decode(&patch); err != nil {
			writeStatus(w, http.StatusBadRequest, err.Error())
			return
		}
		if uid, ok := patch.Metadata.Annotations["operator.kcp.io/shard-uid"]; ok {
			k.ShardUIDs[name] = uid
		}
		k.writeShard(w, name, baseURL)
	case http.MethodDelete:
		delete(k.Shards, name)
		delete(k.ShardUIDs, name)
		writeStatus(w, http.StatusOK, "")
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

// writeShard answers with kcp's Shard object name.
func (k *Kcp) writeShard(w http.ResponseWriter, name, baseURL string) {
	metadata := map[string]any{"name": name, "resourceVersion": "1"}
	if uid, ok := k.ShardUIDs[name]; ok {
		metadata["annotations"] = map[string]string{"operator.kcp.io/shard-uid": uid}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"apiVersion": "core.kcp.io/v1alpha1", "kind": "Shard",
		"metadata": metadata,
		"spec":     map[string]any{"baseURL": baseURL},
	})
}

// writeStatus answers as kube-apiserver does, with a Status.
func writeStatus(w http.ResponseWriter, code int, message string) {
	status := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Code: int32(code), Message: message, Reason: metav1.StatusReasonUnknown}
	switch code {
	case http.StatusOK:
		status.Status = metav1.StatusSuccess
	case http.StatusNotFound:
		status.Reason = metav1.StatusReasonNotFound
	case http.StatusForbidden:
		status.Reason = metav1.StatusReasonForbidden
	case http.StatusServiceUnavailable:
		status.Reason = metav1.StatusReasonServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(status)
}
