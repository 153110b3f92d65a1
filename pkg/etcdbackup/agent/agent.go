// Package agent is the backup agent of a managed etcd (docs/etcd.md, "Backups and restore"):
// a process next to the members, in the server's image, that takes snapshots from a follower
// into the store, verifies them there, keeps the newest, and serves them to the members'
// restore, over TLS that only certificates of the RootShard's etcd client CA pass. The
// server asks it for snapshots; the snapshots themselves never pass through the server.
package agent

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/etcdbackup"
)

// Port is the agent's TLS port.
const Port = 2390

// Snapshot is a snapshot as the agent's API answers it.
type Snapshot struct {
	Name     string    `json:"name"`
	Time     time.Time `json:"time"`
	Revision int64     `json:"revision,omitempty"`
	Size     int64     `json:"size"`
	SHA256   string    `json:"sha256,omitempty"`
	// Member is the client URL of the member it was taken from.
	Member string `json:"member,omitempty"`
	// Deleted are the snapshots the retention removed after it.
	Deleted []string `json:"deleted,omitempty"`
}

// Error is the body of every answer that is not a success.
type Error struct {
	Error string `json:"error"`
	// Reason tells a 409's cause: ReasonBusy or ReasonExists.
	Reason string `json:"reason,omitempty"`
}

// Server serves the agent's API:
//
//	POST /snapshots                       take a snapshot now: 201 and the Snapshot; 409 while one is taken.
//	                                      An optional body {"name": "<base>-<yyyymmdd-hhmmss>"} names it
//	                                      (400 for another name, 409 when the store holds it)
//	GET  /snapshots                       the store's snapshots, newest first (name, time, size)
//	GET  /snapshots/{name}                the snapshot's bytes, as stored
//	GET  /snapshots/{name}/verification   etcd's hash check of the stored snapshot: 200 with size and sha256, 422 when it fails
type Server struct {
	// Store is where the snapshots are kept.
	Store etcdbackup.Store
	// Endpoints are the members' client URLs.
	Endpoints []string
	// TLS is the agent's client TLS toward the members.
	TLS *tls.Config
	// Base is the snapshots' name base: the managed etcd's <base>.
	Base string
	// Retention is how many snapshots the store keeps.
	Retention int

	busy atomic.Bool
}

// Handler is the agent's API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /snapshots", s.take)
	mux.HandleFunc("GET /snapshots", s.list)
	mux.HandleFunc("GET /snapshots/{name}", s.get)
	mux.HandleFunc("GET /snapshots/{name}/verification", s.verify)
	return mux
}

// TakeRequest is the optional body of POST /snapshots.
type TakeRequest struct {
	// Name is the snapshot's name, one of the agent's base; empty, the agent names it.
	Name string `json:"name,omitempty"`
}

// Reasons of a 409 (Error.Reason).
const (
	ReasonBusy   = "Busy"
	ReasonExists = "Exists"
)

func (s *Server) take(w http.ResponseWriter, r *http.Request) {
	var req TakeRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<10))
	if err == nil && len(bytes.TrimSpace(body)) > 0 {
		err = json.Unmarshal(body, &req)
	}
	if err == nil && req.Name != "" {
		err = etcdbackup.CheckName(s.Base, req.Name)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if !s.busy.CompareAndSwap(false, true) {
		writeJSON(w, http.StatusConflict, Error{Error: "a snapshot is being taken", Reason: ReasonBusy})
		return
	}
	defer s.busy.Store(false)
	snap, err := s.Take(r.Context(), req.Name)
	if errors.Is(err, etcdbackup.ErrExists) {
		writeJSON(w, http.StatusConflict, Error{Error: err.Error(), Reason: ReasonExists})
		return
	}
	if err != nil {
		klog.FromContext(r.Context()).Error(err, "Taking a snapshot failed")
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	writeJSON(w, http.StatusCreated, snap)
}

// Take takes a snapshot from a follower (the leader only when it is alone), writes and
// verifies it in the store under name (empty: named from the time), and removes what the
// retention does not keep.
func (s *Server) Take(ctx context.Context, name string) (Snapshot, error) {
	member, err := s.pickMember(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{member}, TLS: s.TLS, DialTimeout: 10 * time.Second, Context: ctx})
	if err != nil {
		return Snapshot{}, fmt.Errorf("connecting to %s: %w", member, err)
	}
	defer func() { _ = client.Close() }()
	saved, err := etcdbackup.SaveAs(ctx, client.Maintenance, member, s.Store, s.Base, name)
	if err != nil {
		return Snapshot{}, err
	}
	deleted, err := etcdbackup.Retain(ctx, s.Store, s.Base, s.Retention)
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot %s is taken, but keeping the newest %d failed: %w", saved.Name, s.Retention, err)
	}
	klog.FromContext(ctx).Info("Took a snapshot", "name", saved.Name, "member", member, "revision", saved.Revision, "size", saved.Size, "deleted", deleted)
	return Snapshot{Name: saved.Name, Time: saved.Time, Revision: saved.Revision, Size: saved.Size, SHA256: saved.SHA256,
		Member: member, Deleted: deleted}, nil
}

// pickMember answers a follower that answers and has no alarm, so that the snapshot's read
// does not fall on the leader, which every write goes through; the leader when no follower
// qualifies (a cluster of one).
func (s *Server) pickMember(ctx context.Context) (string, error) {
	client, err := clientv3.New(clientv3.Config{Endpoints: s.Endpoints, TLS: s.TLS, DialTimeout: 10 * time.Second, Context: ctx})
	if err != nil {
		return "", fmt.Errorf("connecting to the members: %w", err)
	}
	defer func() { _ = client.Close() }()
	var leader string
	var errs []error
	for _, ep := range s.Endpoints {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		status, err := client.Status(sctx, ep)
		cancel()
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", ep, err))
		case len(status.Errors) > 0:
			errs = append(errs, fmt.Errorf("%s: %v", ep, status.Errors))
		case status.Leader == status.Header.GetMemberId():
			leader = ep
		default:
			return ep, nil
		}
	}
	if leader != "" {
		return leader, nil
	}
	return "", fmt.Errorf("no member can give a snapshot: %w", errors.Join(errs...))
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	objects, err := s.Store.List(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	out := []Snapshot{}
	for _, o := range objects {
		t, ok := etcdbackup.NameTime(o.Name)
		if !ok {
			continue
		}
		out = append(out, Snapshot{Name: o.Name, Time: t, Size: o.Size})
	}
	slices.SortFunc(out, func(a, b Snapshot) int { return b.Time.Compare(a.Time) })
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := etcdbackup.ValidName(name); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	rc, err := s.Store.Get(r.Context(), name)
	if errors.Is(err, etcdbackup.ErrNotFound) {
		writeError(w, http.StatusNotFound, err)
		return
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	defer func() { _ = rc.Close() }()
	w.Header().Set("Content-Type", "application/octet-stream")
	if _, err := io.Copy(w, rc); err != nil {
		// The status is sent; a cut body fails the reader's hash check.
		klog.FromContext(r.Context()).Error(err, "Sending a snapshot failed", "name", name)
	}
}

func (s *Server) verify(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := etcdbackup.ValidName(name); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	v, err := etcdbackup.VerifyStored(r.Context(), s.Store, name)
	switch {
	case errors.Is(err, etcdbackup.ErrNotFound):
		writeError(w, http.StatusNotFound, err)
	case errors.Is(err, etcdbackup.ErrCorrupt):
		writeError(w, http.StatusUnprocessableEntity, err)
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, err)
	default:
		writeJSON(w, http.StatusOK, Snapshot{Name: name, Size: v.Size, SHA256: v.SHA256})
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, Error{Error: err.Error()})
}
