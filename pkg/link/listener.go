package link

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// The refusals of the limits, beside Authorize's.
const (
	// RateLimited: the declaration's remote sent more requests than its rate (429).
	RateLimited Reason = "RateLimited"
	// TooManyStreams: it holds MaxStreams bundle streams already (429).
	TooManyStreams Reason = "TooManyStreams"
	// BodyTooLarge: the request's body is over MaxBodyBytes (413).
	BodyTooLarge Reason = "BodyTooLarge"
)

// streamRetryAfter is when a remote refused a stream may try again: a stream ends when its
// remote goes, which takes the connection's timeouts.
const streamRetryAfter = 5 * time.Second

// Refusal is a request the listener refused, for the log and, when it has a declaration, a
// Warning Event on it.
type Refusal struct {
	Reason Reason
	// Declaration is the declaration the client certificate proved to be for, or nil.
	Declaration *Declaration
	Request     Request
	// Status is the HTTP status answered.
	Status int
	// RemoteAddr is the client's address.
	RemoteAddr string
}

// Listener puts Authorize and the limits in front of the listener's routes.
type Listener struct {
	// Declarations and Trust are read for each request (the server's caches).
	Declarations func() []Declaration
	Trust        func() Trust
	Limiter      *Limiter
	// Refused, when set, is told of every refusal.
	Refused func(Refusal)
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// The routes of the listener.
const (
	SignPath    = "/v1/sign/"   // POST /v1/sign/{kind}/{role}: a PEM CSR
	BundlesPath = "/v1/bundles" // GET: the stream of the trust bundles
	EventsPath  = "/v1/events/" // POST /v1/events/{kind}: a consumer's Event
)

// RequestOf is the Request of an HTTP request from its route; the zero Request, which no
// declaration allows, for any other.
func RequestOf(r *http.Request) Request {
	switch p := r.URL.Path; {
	case r.Method == http.MethodPost && strings.HasPrefix(p, SignPath):
		if kind, role, ok := strings.Cut(strings.TrimPrefix(p, SignPath), "/"); ok && kind != "" && role != "" && !strings.Contains(role, "/") {
			return Request{Operation: Sign, Kind: ConsumerKind(kind), Role: pki.CA(role)}
		}
	case r.Method == http.MethodGet && p == BundlesPath:
		return Request{Operation: WatchBundles}
	case r.Method == http.MethodPost && p == RenewPath:
		return Request{Operation: Renew}
	case r.Method == http.MethodPost && strings.HasPrefix(p, EventsPath):
		if kind := strings.TrimPrefix(p, EventsPath); kind != "" && !strings.Contains(kind, "/") {
			return Request{Operation: ReportEvent, Kind: ConsumerKind(kind)}
		}
	case r.Method == http.MethodPost && strings.HasPrefix(p, DeregisterPath):
		if kind := strings.TrimPrefix(p, DeregisterPath); kind != "" && !strings.Contains(kind, "/") {
			return Request{Operation: Deregister, Kind: ConsumerKind(kind)}
		}
	}
	return Request{}
}

// Authorized is what the listener let through, for the route's handler.
type Authorized struct {
	Declaration Declaration
	Request     Request
}

type authorizedKey struct{}

// WithAuthorized is ctx carrying a: what Handler hands its routes (and tests of a route's
// handler alone).
func WithAuthorized(ctx context.Context, a Authorized) context.Context {
	return context.WithValue(ctx, authorizedKey{}, a)
}

// AuthorizedFrom is the Authorized of a request the listener let through.
func AuthorizedFrom(ctx context.Context) (Authorized, bool) {
	a, ok := ctx.Value(authorizedKey{}).(Authorized)
	return a, ok
}

// Handler authorizes each request against the declarations and the trust, holds it to its
// declaration's limits, and hands it to next with its Authorized in the context and its body
// read (at most MaxBodyBytes). A refusal answers a bare 403 {"reason":"Forbidden"}, whatever
// the reason, which only Refused hears; the limits answer 429 with Retry-After, or 413.
func (l *Listener) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		if l.Now != nil {
			now = l.Now()
		}
		request := RequestOf(r)
		var peer []*x509.Certificate
		var serverName string
		if r.TLS != nil {
			peer, serverName = r.TLS.PeerCertificates, r.TLS.ServerName
		}
		refuse := func(reason Reason, d *Declaration, status int, body string) {
			if l.Refused != nil {
				l.Refused(Refusal{Reason: reason, Declaration: d, Request: request, Status: status, RemoteAddr: r.RemoteAddr})
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, `{"reason":"`+body+`"}`)
		}
		decision := Authorize(peer, serverName, request, l.Declarations(), l.Trust(), now)
		if !decision.Allowed() {
			refuse(decision.Reason, decision.Declaration, http.StatusForbidden, "Forbidden")
			return
		}
		d := decision.Declaration
		if wait, ok := l.Limiter.Allow(d.UID, now); !ok {
			w.Header().Set("Retry-After", retryAfter(wait))
			refuse(RateLimited, d, http.StatusTooManyRequests, "TooManyRequests")
			return
		}
		if request.Operation == WatchBundles {
			release, ok := l.Limiter.OpenStream(d.UID)
			if !ok {
				w.Header().Set("Retry-After", retryAfter(streamRetryAfter))
				refuse(TooManyStreams, d, http.StatusTooManyRequests, "TooManyRequests")
				return
			}
			defer release()
		}
		limit := l.Limiter.Limits().MaxBodyBytes
		if r.ContentLength > limit {
			refuse(BodyTooLarge, d, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge")
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err != nil {
			http.Error(w, "", http.StatusBadRequest)
			return
		}
		if int64(len(body)) > limit {
			refuse(BodyTooLarge, d, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		ctx := WithAuthorized(r.Context(), Authorized{Declaration: *d, Request: request})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// retryAfter is a Retry-After of whole seconds, at least one.
func retryAfter(wait time.Duration) string {
	return strconv.Itoa(int(math.Max(1, math.Ceil(wait.Seconds()))))
}

// TLSConfig is the listener's TLS: TLS 1.3 alone, HTTP/2, and a client certificate asked for
// but verified by Authorize, not by crypto/tls, since the CA it must chain to depends on the
// declaration it names. crypto/tls still checks that the client holds the certificate's key.
// certificate picks the serving certificate by the SNI, one per RootShard.
func TLSConfig(certificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS13, ClientAuth: tls.RequestClientCert, GetCertificate: certificate,
		NextProtos: []string{"h2", "http/1.1"}}
}
