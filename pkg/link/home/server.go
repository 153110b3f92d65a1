// Package home serves the link listener on the home server (docs/links.md): the routes a
// linked remote calls over mutual TLS, behind link.Listener's checks, with the RootShards'
// serving certificates picked by SNI, the Links as declarations and the link CAs as trust,
// all read from the server's caches. Every replica serves it, leader or not.
package home

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	operatorlisters "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/link"
)

// Config is what the listener is built of.
type Config struct {
	// BindAddress is the host:port it listens on.
	BindAddress string
	// Links, RootShards and CacheServers are the caches of our kinds; Secrets the cache of
	// the host's Secrets the listener reads (SecretsSelector).
	Links        operatorlisters.LinkLister
	RootShards   operatorlisters.RootShardLister
	CacheServers operatorlisters.CacheServerLister
	Secrets      corev1listers.SecretLister
	// Synced are the caches' HasSynced: nothing is served before they are.
	Synced []cache.InformerSynced
	// Signer signs what the routes let through (CertificateRequests, in the server).
	Signer Signer
	// Recorder records the Warning Events of refusals on the Links.
	Recorder record.EventRecorder
	// Events serves POST /v1/events/{kind}; nil answers 404.
	Events http.Handler
	// Registrations serves POST /v1/deregister/{kind}; nil answers 404.
	Registrations *Registrations
	// Heartbeat is how often a bundle stream says it is alive; zero is
	// link.HeartbeatInterval.
	Heartbeat time.Duration
	// Limits are the limits per Link; the zero value is link.DefaultLimits.
	Limits link.Limits
}

// Server is the link listener.
type Server struct {
	cfg     Config
	limiter *link.Limiter
	changes *changes
	certs   servingCertificates
}

// New is the listener of cfg.
func New(cfg Config) *Server {
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = link.HeartbeatInterval
	}
	if cfg.Limits == (link.Limits{}) {
		cfg.Limits = link.DefaultLimits
	}
	return &Server{cfg: cfg, limiter: link.NewLimiter(cfg.Limits), changes: newChanges()}
}

// Handler is the listener's routes behind link.Listener: the checks of every request, its
// limits, and the refusals to the log and to Warning Events.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+link.SignPath+"{kind}/{role}", s.sign)
	mux.HandleFunc("POST "+link.RenewPath, s.renew)
	mux.HandleFunc("GET "+link.BundlesPath, s.bundles)
	if s.cfg.Events != nil {
		mux.Handle("POST "+link.EventsPath+"{kind}", s.cfg.Events)
	}
	if s.cfg.Registrations != nil {
		mux.HandleFunc("POST "+link.DeregisterPath+"{kind}", s.deregister)
	}
	l := &link.Listener{Declarations: s.declarations, Trust: s.trust, Limiter: s.limiter, Refused: s.refused}
	return l.Handler(mux)
}

// TLSConfig is the listener's TLS (link.TLSConfig), with each RootShard's serving
// certificate picked by the SNI.
func (s *Server) TLSConfig() *tls.Config { return link.TLSConfig(s.certificate) }

// EventHandler tells the listener of a change of what it reads: the open bundle streams
// look again, and a deleted Link's limits (and what Events keeps of it) are forgotten. The server adds it to each cache
// of Config.
func (s *Server) EventHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.changes.notify() },
		UpdateFunc: func(any, any) { s.changes.notify() },
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if l, ok := obj.(*operatorv1alpha1.Link); ok {
				s.limiter.Forget(string(l.UID))
				if f, ok := s.cfg.Events.(interface{ Forget(uid string) }); ok {
					f.Forget(string(l.UID))
				}
			}
			s.changes.notify()
		},
	}
}

// shutdownGrace is how long a stopping listener waits for its requests: a signature waits
// at most signTimeout, and the streams end at once.
const shutdownGrace = 5 * time.Second

// Run serves the listener until ctx is done, once the caches are synced, then stops: the
// bundle streams end, and the requests in flight get shutdownGrace.
func (s *Server) Run(ctx context.Context) error {
	if !cache.WaitForCacheSync(ctx.Done(), s.cfg.Synced...) {
		return ctx.Err()
	}
	ln, err := net.Listen("tcp", s.cfg.BindAddress)
	if err != nil {
		return fmt.Errorf("the link listener on %s: %w", s.cfg.BindAddress, err)
	}
	logger := klog.FromContext(ctx)
	srv := &http.Server{
		Handler:           s.Handler(),
		TLSConfig:         s.TLSConfig(),
		ReadHeaderTimeout: 10 * time.Second,
		// The requests' contexts end with ctx: the streams stop with the server.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeTLS(ln, "", "") }()
	logger.Info("Serving the link listener", "address", ln.Addr().String())
	select {
	case err := <-done:
		return fmt.Errorf("the link listener on %s: %w", s.cfg.BindAddress, err)
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(stop); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
