package link

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// listenerFixture is a listener on loopback with real TLS: two RootShards with a link CA
// and a serving certificate each, a Link of each, and what the route's handler saw.
type listenerFixture struct {
	t        *testing.T
	url      string
	roots    *x509.CertPool
	refusals []Refusal
	handled  []Authorized
	bodies   []string
	mu       sync.Mutex
	// hold keeps a bundle stream open until it is closed.
	hold chan struct{}
	// eu1, us1 and stranger are client certificates: of the Link eu-1 of RootShard a/root,
	// of the Link us-1 of RootShard b/root, and of eu-1's SANs from another CA.
	eu1, us1, stranger tls.Certificate
}

func newListener(t *testing.T, limits Limits) *listenerFixture {
	caA, caB, other := newCA(t, "a-link-ca"), newCA(t, "b-link-ca"), newCA(t, "stranger")
	eu1 := Declaration{Namespace: "a", Name: "eu-1", UID: "uid-eu-1", RootShard: "root", Identity: "eu-1.links.example.com",
		Consumers: []ConsumerKind{Shard}}
	us1 := Declaration{Namespace: "b", Name: "us-1", UID: "uid-us-1", RootShard: "root", Identity: "us-1.links.example.com",
		Consumers: []ConsumerKind{FrontProxy}}
	trust := Trust{
		{Namespace: "a", Name: "root"}: {LinkCAs: []*x509.Certificate{caA.Cert}, ServerName: "root.a.link"},
		{Namespace: "b", Name: "root"}: {LinkCAs: []*x509.Certificate{caB.Cert}, ServerName: "root.b.link"},
	}
	pair := func(ca testCA, l leaf) tls.Certificate {
		c, k := ca.issue(t, l)
		return tls.Certificate{Certificate: [][]byte{c.Raw}, PrivateKey: k, Leaf: c}
	}
	serving := func(ca testCA, name string) tls.Certificate {
		return pair(ca, leaf{dns: []string{name}, from: now.Add(-time.Hour), to: now.Add(time.Hour), usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	}
	servingBy := map[string]tls.Certificate{"root.a.link": serving(caA, "root.a.link"), "root.b.link": serving(caB, "root.b.link")}
	f := &listenerFixture{t: t, roots: x509.NewCertPool(), hold: make(chan struct{}),
		eu1: pair(caA, client(eu1.Identity, eu1.URI())), us1: pair(caB, client(us1.Identity, us1.URI())),
		stranger: pair(other, client(eu1.Identity, eu1.URI()))}
	f.roots.AddCert(caA.Cert)
	f.roots.AddCert(caB.Cert)

	l := &Listener{
		Declarations: func() []Declaration { return []Declaration{eu1, us1} },
		Trust:        func() Trust { return trust },
		Limiter:      NewLimiter(limits),
		Refused: func(r Refusal) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.refusals = append(f.refusals, r)
		},
		// The certificates are valid around now; the rate does not refill.
		Now: func() time.Time { return now },
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := AuthorizedFrom(r.Context())
		require.True(t, ok)
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		f.mu.Lock()
		f.handled, f.bodies = append(f.handled, a), append(f.bodies, string(body))
		f.mu.Unlock()
		if a.Request.Operation == WatchBundles {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-f.hold:
			case <-r.Context().Done():
			}
			return
		}
		_, _ = io.WriteString(w, "signed")
	})
	srv := httptest.NewUnstartedServer(l.Handler(next))
	srv.EnableHTTP2 = true
	srv.TLS = TLSConfig(func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		c, ok := servingBy[hello.ServerName]
		if !ok {
			return nil, fmt.Errorf("no serving certificate for %q", hello.ServerName)
		}
		return &c, nil
	})
	srv.StartTLS()
	t.Cleanup(func() {
		select {
		case <-f.hold:
		default:
			close(f.hold)
		}
		srv.Close()
	})
	f.url = srv.URL
	return f
}

// do sends a request with the client certificate cert (none when nil) under the SNI
// serverName, and returns the response and its body.
func (f *listenerFixture) do(cert *tls.Certificate, serverName, method, path string, body io.Reader) (*http.Response, string) {
	f.t.Helper()
	// The client verifies the serving certificate at the tests' clock, as the listener does
	// the client's: the certificates are made around it, not around the day the tests run.
	cfg := &tls.Config{RootCAs: f.roots, ServerName: serverName, MinVersion: tls.VersionTLS12, Time: func() time.Time { return now }}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	transport := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
	f.t.Cleanup(transport.CloseIdleConnections)
	client := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	req, err := http.NewRequest(method, f.url+path, body)
	require.NoError(f.t, err)
	resp, err := client.Do(req)
	require.NoError(f.t, err)
	if method == http.MethodGet && path == BundlesPath && resp.StatusCode == http.StatusOK {
		// A stream: its body stays open.
		return resp, ""
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	return resp, string(b)
}

// handledCount is how many requests reached the route's handler.
func (f *listenerFixture) handledCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.handled)
}

func (f *listenerFixture) lastRefusal() Refusal {
	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotEmpty(f.t, f.refusals)
	return f.refusals[len(f.refusals)-1]
}

func TestListenerAuthorizes(t *testing.T) {
	f := newListener(t, DefaultLimits)
	csr := "-----BEGIN CERTIFICATE REQUEST-----\n...\n-----END CERTIFICATE REQUEST-----\n"
	resp, body := f.do(&f.eu1, "root.a.link", http.MethodPost, "/v1/sign/Shard/server", strings.NewReader(csr))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Equal(t, "signed", body)
	assert.Equal(t, "HTTP/2.0", resp.Proto)
	assert.Equal(t, uint16(tls.VersionTLS13), resp.TLS.Version)
	require.Equal(t, 1, f.handledCount())
	assert.Equal(t, "uid-eu-1", f.handled[0].Declaration.UID)
	assert.Equal(t, Request{Operation: Sign, Kind: Shard, Role: pki.ServerCA}, f.handled[0].Request)
	assert.Equal(t, csr, f.bodies[0], "the handler reads the body as sent")
	assert.Empty(t, f.refusals)

	eu1, us1 := f.eu1, f.us1
	for _, tc := range []struct {
		name        string
		cert        *tls.Certificate
		sni, method string
		path        string
		reason      Reason
		declaration string
	}{
		{name: "no client certificate", sni: "root.a.link", method: http.MethodPost, path: "/v1/sign/Shard/server", reason: NoClientCertificate},
		{name: "another CA", cert: &f.stranger, sni: "root.a.link", method: http.MethodPost, path: "/v1/sign/Shard/server", reason: UntrustedChain},
		{name: "another RootShard's server name", cert: &eu1, sni: "root.b.link", method: http.MethodPost, path: "/v1/sign/Shard/server",
			reason: WrongServerName, declaration: "uid-eu-1"},
		{name: "a kind not declared", cert: &us1, sni: "root.b.link", method: http.MethodPost, path: "/v1/sign/Shard/server",
			reason: ConsumerKindNotAllowed, declaration: "uid-us-1"},
		{name: "an unknown route", cert: &eu1, sni: "root.a.link", method: http.MethodGet, path: "/v1/sign/Shard/server",
			reason: OperationNotAllowed, declaration: "uid-eu-1"},
		{name: "a path below a route", cert: &eu1, sni: "root.a.link", method: http.MethodPost, path: "/v1/events/Shard/x",
			reason: OperationNotAllowed, declaration: "uid-eu-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			handled := f.handledCount()
			resp, body := f.do(tc.cert, tc.sni, tc.method, tc.path, strings.NewReader("{}"))
			assert.Equal(t, http.StatusForbidden, resp.StatusCode)
			assert.JSONEq(t, `{"reason":"Forbidden"}`, body, "the answer names no reason")
			assert.Equal(t, handled, f.handledCount(), "nothing reaches the handler")
			r := f.lastRefusal()
			assert.Equal(t, tc.reason, r.Reason)
			assert.Equal(t, http.StatusForbidden, r.Status)
			if tc.declaration == "" {
				assert.Nil(t, r.Declaration)
			} else {
				require.NotNil(t, r.Declaration)
				assert.Equal(t, tc.declaration, r.Declaration.UID)
			}
		})
	}
}

func TestListenerLimitsTheBody(t *testing.T) {
	f := newListener(t, Limits{MaxStreams: 1, MaxBodyBytes: 16, RequestsPerSecond: 1, Burst: 10})
	resp, _ := f.do(&f.eu1, "root.a.link", http.MethodPost, "/v1/events/Shard", strings.NewReader(strings.Repeat("x", 16)))
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a body of the limit")
	resp, _ = f.do(&f.eu1, "root.a.link", http.MethodPost, "/v1/events/Shard", strings.NewReader(strings.Repeat("x", 17)))
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "a body over the limit, by its length")
	assert.Equal(t, BodyTooLarge, f.lastRefusal().Reason)
	// Without a length: read up to the limit, then refused.
	resp, _ = f.do(&f.eu1, "root.a.link", http.MethodPost, "/v1/events/Shard", io.MultiReader(strings.NewReader(strings.Repeat("x", 10)),
		strings.NewReader(strings.Repeat("y", 10))))
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "a streamed body over the limit")
	assert.Equal(t, 1, f.handledCount())
}

func TestListenerLimitsTheRate(t *testing.T) {
	f := newListener(t, Limits{MaxStreams: 1, MaxBodyBytes: 1024, RequestsPerSecond: 0.5, Burst: 2})
	for range 2 {
		resp, _ := f.do(&f.eu1, "root.a.link", http.MethodPost, "/v1/events/Shard", strings.NewReader("{}"))
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	resp, body := f.do(&f.eu1, "root.a.link", http.MethodPost, "/v1/events/Shard", strings.NewReader("{}"))
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "2", resp.Header.Get("Retry-After"), "one request every two seconds")
	var answer map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &answer))
	assert.Equal(t, map[string]string{"reason": "TooManyRequests"}, answer)
	r := f.lastRefusal()
	assert.Equal(t, RateLimited, r.Reason)
	assert.Equal(t, "uid-eu-1", r.Declaration.UID)
	resp, _ = f.do(&f.us1, "root.b.link", http.MethodPost, "/v1/events/FrontProxy", strings.NewReader("{}"))
	assert.Equal(t, http.StatusOK, resp.StatusCode, "another declaration's rate is its own")
}

func TestListenerLimitsTheStreams(t *testing.T) {
	f := newListener(t, Limits{MaxStreams: 1, MaxBodyBytes: 1024, RequestsPerSecond: 1, Burst: 1000})
	first, _ := f.do(&f.eu1, "root.a.link", http.MethodGet, BundlesPath, nil)
	require.Equal(t, http.StatusOK, first.StatusCode)
	resp, _ := f.do(&f.eu1, "root.a.link", http.MethodGet, BundlesPath, nil)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "one stream at a time")
	assert.Equal(t, "5", resp.Header.Get("Retry-After"))
	assert.Equal(t, TooManyStreams, f.lastRefusal().Reason)
	close(f.hold)
	_ = first.Body.Close()
	require.Eventually(t, func() bool {
		resp, _ := f.do(&f.eu1, "root.a.link", http.MethodGet, BundlesPath, nil)
		if resp.StatusCode == http.StatusOK {
			_ = resp.Body.Close()
		}
		return resp.StatusCode == http.StatusOK
	}, 5*time.Second, 50*time.Millisecond, "the stream's end makes room")
}

func TestRequestOf(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		request      Request
	}{
		{http.MethodPost, "/v1/sign/Shard/server", Request{Operation: Sign, Kind: Shard, Role: pki.ServerCA}},
		{http.MethodPost, "/v1/sign/CacheClient/cache-server", Request{Operation: Sign, Kind: CacheClient, Role: CacheServerCA}},
		{http.MethodGet, "/v1/bundles", Request{Operation: WatchBundles}},
		{http.MethodPost, "/v1/renew", Request{Operation: Renew}},
		{http.MethodGet, "/v1/renew", Request{}},
		{http.MethodPost, "/v1/renew/Shard", Request{}},
		{http.MethodPost, "/v1/events/Kubeconfig", Request{Operation: ReportEvent, Kind: Kubeconfig}},
		{http.MethodGet, "/v1/sign/Shard/server", Request{}},
		{http.MethodPost, "/v1/sign/Shard", Request{}},
		{http.MethodPost, "/v1/sign/Shard/", Request{}},
		{http.MethodPost, "/v1/sign//server", Request{}},
		{http.MethodPost, "/v1/sign/Shard/server/x", Request{}},
		{http.MethodPost, "/v1/bundles", Request{}},
		{http.MethodGet, "/v1/bundles/", Request{}},
		{http.MethodPost, "/v1/events/", Request{}},
		{http.MethodPost, "/v1/events/Shard/x", Request{}},
		{http.MethodGet, "/", Request{}},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		assert.Equal(t, tc.request, RequestOf(r), "%s %s", tc.method, tc.path)
	}
}
