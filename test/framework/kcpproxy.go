package framework

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
)

// The request headers that carry the caller's identity to the backend, as kcp's front proxy
// sends them to a shard and kube-apiserver's request-header authenticator reads them.
const (
	remoteUserHeader  = "X-Remote-User"
	remoteGroupHeader = "X-Remote-Group"
	remoteExtraPrefix = "X-Remote-Extra-"
)

// workspaceProxy is the front of a KcpDouble. It authenticates the caller by its client
// certificate against kcp's client CA bundle, as kcp does, and forwards the request to the
// backend kube-apiserver with /clusters/<workspace> cut off the path and the verified
// identity in request headers, authenticating itself with a request-header client
// certificate that the backend trusts for exactly that.
type workspaceProxy struct {
	authn *x509request.Authenticator
	// identified carries the proxy's request-header client certificate; anonymous carries
	// none, so that the backend sees an anonymous request as its own anonymous user. kcp
	// sends its certificate either way, but kube-apiserver, unlike a kcp shard, then fails
	// the request: it checks that certificate against its client CA too.
	identified, anonymous *httputil.ReverseProxy

	mu sync.Mutex
	// hosted, when set, are the only workspaces this shard hosts (HostOnly).
	hosted map[string]bool
	// requestHeader, when set, authenticates a front proxy's requests (AcceptProxy).
	requestHeader *requestHeaderTrust
}

// requestHeaderTrust is kcp's request-header authentication of a shard: a client certificate
// of the request-header CA whose user is an allowed name may assert the caller's identity in
// X-Remote-* headers (--requestheader-client-ca-file, --requestheader-allowed-names).
type requestHeaderTrust struct {
	authn        *x509request.Authenticator
	allowedNames []string
}

// workspaceProxyConfig is what a workspaceProxy trusts and how it reaches the backend.
type workspaceProxyConfig struct {
	// clientCA is the bundle of CAs whose client certificates it accepts.
	clientCA []byte
	// backend is the backend's URL; backendCA verifies its serving certificate.
	backend   *url.URL
	backendCA []byte
	// proxyCert and proxyKey are the request-header client certificate, as PEM.
	proxyCert, proxyKey []byte
}

func newWorkspaceProxy(c workspaceProxyConfig) (*workspaceProxy, error) {
	clientCAs := x509.NewCertPool()
	if !clientCAs.AppendCertsFromPEM(c.clientCA) {
		return nil, errors.New("the client CA bundle has no certificate")
	}
	opts := x509request.DefaultVerifyOptions()
	opts.Roots = clientCAs
	backendCAs := x509.NewCertPool()
	if !backendCAs.AppendCertsFromPEM(c.backendCA) {
		return nil, errors.New("the backend CA has no certificate")
	}
	cert, err := tls.X509KeyPair(c.proxyCert, c.proxyKey)
	if err != nil {
		return nil, err
	}
	return &workspaceProxy{
		authn:      x509request.New(opts, x509request.CommonNameUserConversion),
		identified: backendProxy(c.backend, &tls.Config{RootCAs: backendCAs, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}),
		anonymous:  backendProxy(c.backend, &tls.Config{RootCAs: backendCAs, MinVersion: tls.VersionTLS12}),
	}, nil
}

// backendProxy forwards to backend as it is, over a transport of its own.
func backendProxy(backend *url.URL, tlsConfig *tls.Config) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(backend) },
		Transport: &http.Transport{TLSClientConfig: tlsConfig, TLSHandshakeTimeout: 10 * time.Second, IdleConnTimeout: 90 * time.Second},
		// A backend that is down answers 502; that is for the caller, not for the test's log.
		ErrorLog: log.New(io.Discard, "", 0),
	}
}

// ServeHTTP authenticates the request, rewrites its path and identity headers, and forwards
// it to the backend.
func (p *workspaceProxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	user, groups, ok, err := p.authenticate(req)
	if err != nil {
		// A client certificate that kcp's client CAs did not sign, or a request-header
		// certificate of a name not allowed: 401, as kcp answers.
		writeStatus(w, apierrors.NewUnauthorized("Unauthorized"))
		return
	}
	path, found := backendPath(req.URL.EscapedPath())
	if !found {
		writeStatus(w, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound,
			Reason: metav1.StatusReasonNotFound, Message: "no workspace in the path " + req.URL.Path}})
		return
	}
	if ws, isWorkspace := requestWorkspace(req.URL.EscapedPath()); isWorkspace && !p.hosts(ws) {
		// What kcp's local proxy answers for a workspace its index places on another shard
		// (pkg/server/localproxy.go@v0.32.3): the request must go through a front proxy.
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Not found on this shard", http.StatusTooManyRequests)
		return
	}
	out := req.Clone(req.Context())
	clearIdentityHeaders(out.Header)
	if out.URL.Path, err = url.PathUnescape(path); err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	out.URL.RawPath = path
	if !ok {
		p.anonymous.ServeHTTP(w, out)
		return
	}
	out.Header.Set(remoteUserHeader, user)
	for _, g := range groups {
		out.Header.Add(remoteGroupHeader, g)
	}
	p.identified.ServeHTTP(w, out)
}

// authenticate is kcp's authentication of a shard's caller: first a front proxy's
// request-header certificate of an allowed name and the identity in its headers (when
// AcceptProxy set it up), then a client certificate of the client CA bundle. ok is false for
// an anonymous request.
func (p *workspaceProxy) authenticate(req *http.Request) (user string, groups []string, ok bool, err error) {
	p.mu.Lock()
	rh := p.requestHeader
	p.mu.Unlock()
	if rh != nil {
		// As kube-apiserver's union of authenticators: a certificate the request-header CA
		// does not verify, of a name not allowed, or without a user header, is tried as a
		// client certificate next.
		if resp, found, err := rh.authn.AuthenticateRequest(req); err == nil && found && slices.Contains(rh.allowedNames, resp.User.GetName()) {
			if name := req.Header.Get(remoteUserHeader); name != "" {
				return name, req.Header.Values(remoteGroupHeader), true, nil
			}
		}
	}
	resp, found, err := p.authn.AuthenticateRequest(req)
	if err != nil || !found {
		return "", nil, false, err
	}
	return resp.User.GetName(), resp.User.GetGroups(), true, nil
}

// hosts reports whether the shard hosts workspace: every workspace, unless HostOnly named
// some.
func (p *workspaceProxy) hosts(workspace string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hosted == nil || p.hosted[workspace]
}

// requestWorkspace is the workspace of a /clusters/<workspace>/… path.
func requestWorkspace(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/clusters/")
	if !ok {
		return "", false
	}
	ws, _, _ := strings.Cut(rest, "/")
	return ws, ws != ""
}

// hostOnly makes the shard host only workspaces.
func (p *workspaceProxy) hostOnly(workspaces []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hosted = map[string]bool{}
	for _, ws := range workspaces {
		p.hosted[ws] = true
	}
}

// acceptProxy trusts the request-header certificates of caPEM with the allowed names.
func (p *workspaceProxy) acceptProxy(caPEM []byte, allowedNames []string) error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return errors.New("the request-header CA has no certificate")
	}
	opts := x509request.DefaultVerifyOptions()
	opts.Roots = pool
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requestHeader = &requestHeaderTrust{authn: x509request.New(opts, x509request.CommonNameUserConversion), allowedNames: allowedNames}
	return nil
}

// backendPath maps kcp's /clusters/<workspace>/<rest> onto the backend's /<rest>, and passes
// any other path through. It reports false for a /clusters path that names no workspace.
func backendPath(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/clusters/")
	if !ok {
		return path, true
	}
	workspace, rest, _ := strings.Cut(rest, "/")
	if workspace == "" {
		return "", false
	}
	return "/" + rest, true
}

// clearIdentityHeaders deletes what a caller may have sent to pass for someone else: the
// identity headers, and any other credential than its client certificate, which the double
// does not authenticate.
func clearIdentityHeaders(h http.Header) {
	h.Del(remoteUserHeader)
	h.Del(remoteGroupHeader)
	h.Del("Authorization")
	for name := range h {
		if strings.HasPrefix(strings.ToLower(name), strings.ToLower(remoteExtraPrefix)) {
			h.Del(name)
		}
	}
}

// writeStatus answers with err as a Kubernetes Status, as kcp's own handlers do.
func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	status := err.Status()
	status.Kind, status.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(status.Code))
	_ = json.NewEncoder(w).Encode(status)
}
