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
	"strings"
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
	resp, ok, err := p.authn.AuthenticateRequest(req)
	if err != nil {
		// A client certificate that kcp's client CAs did not sign: 401, as kcp answers.
		writeStatus(w, apierrors.NewUnauthorized("Unauthorized"))
		return
	}
	path, found := backendPath(req.URL.EscapedPath())
	if !found {
		writeStatus(w, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound,
			Reason: metav1.StatusReasonNotFound, Message: "no workspace in the path " + req.URL.Path}})
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
	out.Header.Set(remoteUserHeader, resp.User.GetName())
	for _, g := range resp.User.GetGroups() {
		out.Header.Add(remoteGroupHeader, g)
	}
	p.identified.ServeHTTP(w, out)
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
