package home

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// changes tells the bundle streams that something they read changed: each waits on the
// channel of the moment, which the next change closes.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

func newChanges() *changes { return &changes{ch: make(chan struct{})} }

// wait is closed at the next change.
func (c *changes) wait() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ch
}

func (c *changes) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.ch)
	c.ch = make(chan struct{})
}

// bundles serves GET /v1/bundles: newline-delimited link.StreamMessages, the current
// Bundles first, then new Bundles within moments of a change of what they are made of, and
// a Heartbeat every Config.Heartbeat while nothing changes. It ends when the client goes,
// the server stops, or the Link is deleted, deleting or made again: its remote is revoked
// at once. link.Listener holds it to the Link's stream count.
func (s *Server) bundles(w http.ResponseWriter, r *http.Request) {
	a, _ := link.AuthorizedFrom(r.Context())
	d := a.Declaration
	logger := klog.FromContext(r.Context()).WithValues("link", d.Namespace+"/"+d.Name)
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	send := func(m link.StreamMessage) bool {
		if err := enc.Encode(m); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}
	heartbeat := time.NewTicker(s.cfg.Heartbeat)
	defer heartbeat.Stop()
	last := ""
	for {
		// Waited on before reading, so that no change between the read and the wait is lost.
		changed := s.changes.wait()
		l := s.link(d)
		if l == nil || l.DeletionTimestamp != nil {
			return
		}
		b, err := s.bundlesOf(Declaration(l))
		if err != nil {
			logger.V(2).Info("The bundles of a link stream are not there", "err", err.Error())
		} else if b.Revision != last {
			if !send(link.StreamMessage{Type: link.BundlesMessage, Bundles: &b}) {
				return
			}
			last = b.Revision
			heartbeat.Reset(s.cfg.Heartbeat)
		}
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		case <-heartbeat.C:
			if !send(link.StreamMessage{Type: link.HeartbeatMessage}) {
				return
			}
		}
	}
}

// linkCAIssuer is the PEM certificate of the link CA of rs that its Issuer signs from now, as
// status.rotations says (pki.IssuerSecret), nil while its Secret is not rs's or holds none.
func (s *Server) linkCAIssuer(rs *operatorv1alpha1.RootShard) []byte {
	sec, ok := s.ownedSecret(rs.Namespace, pki.IssuerSecret(linkpki.CAName(rs), rs.Status.Rotations, linkpki.Authority), rootshard.Kind, rs.Name, rs.UID)
	if !ok {
		return nil
	}
	first, err := pki.FirstCertificate(sec.Data[corev1.TLSCertKey])
	if err != nil {
		return nil
	}
	return first
}
