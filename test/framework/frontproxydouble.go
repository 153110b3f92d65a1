package framework

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// FrontProxyDouble stands in for kcp-front-proxy, since kcp cannot be built here, run from a
// realized Deployment: its command line and the files its volumes mount (PodFiles). It
// serves with the certificate of --tls-cert-file, authenticates callers by the CAs of
// --client-ca-file, drops kcp-front-proxy's default groups (system:masters,
// system:kcp:logical-cluster-admin) and those of --authentication-drop-groups, and sends
// /clusters/<workspace>/… to the shard that hosts the workspace, as kcp-front-proxy's index
// does: the shard named by the test's Index, found by name among kcp's Shard objects in the
// root workspace, read through --root-kubeconfig's server and identity. It proxies with the
// /clusters/ mapping of --mapping-file (the shard verified by backend_server_ca, the caller's
// identity in X-Remote-* headers over proxy_client_cert), so a shard that does not trust the
// mapping's request-header identity refuses it. Any other path goes by the longest of the
// other mappings whose path prefixes it (such as /services/, or a path to a VirtualWorkspace)
// to that mapping's backend, verified by its backend_server_ca, with the caller's identity in
// X-Remote-* headers over its proxy_client_cert, as kcp-front-proxy's mapping file does.
//
// What it does not model: workspace resolution (kcp's index watches Workspaces and
// LogicalClusters on every shard; here the test says which shard hosts which workspace), the
// rewrite of a workspace path to its logical cluster's name, and authentication other than
// client certificates (no request-header callers such as the shards' mount proxies, no
// OIDC, tokens or ServiceAccounts).
type FrontProxyDouble struct {
	// URL is where it serves, on loopback; Addr is its host:port.
	URL, Addr string

	server    *http.Server
	authn     *x509request.Authenticator
	drop      []string
	root      dynamic.Interface
	index     map[string]string
	transport *http.Transport
	// mappings are the mappings but /clusters/, longest path first.
	mappings []routedMapping
}

// routedMapping is a mapping of the mapping file but /clusters/, as the double sends to it:
// its backend and the transport of its files, or why its files are not there.
type routedMapping struct {
	path      string
	backend   *url.URL
	transport *http.Transport
	err       error
}

// FrontProxyDoubleOptions are a realized kcp-front-proxy Deployment and the kcp around it.
type FrontProxyDoubleOptions struct {
	// Args is the container's command line; Files the files its volumes mount, by path.
	Args  []string
	Files map[string][]byte
	// Index names the shard (kcp's Shard object in root) that hosts each workspace path.
	Index map[string]string
	// Dial opens the connections to kcp, whatever the host of the URL, such as an SNIRouter's
	// address: TLS runs over it to the URL's host.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// pathMapping is an entry of kcp-front-proxy's --mapping-file.
type pathMapping struct {
	Path            string `json:"path"`
	Backend         string `json:"backend"`
	BackendServerCA string `json:"backend_server_ca"`
	ProxyClientCert string `json:"proxy_client_cert"`
	ProxyClientKey  string `json:"proxy_client_key"`
}

// StartFrontProxyDouble starts a front proxy double on a free loopback port; Stop stops it.
func StartFrontProxyDouble(o FrontProxyDoubleOptions) (*FrontProxyDouble, error) {
	flags := commandLineFlags(o.Args)
	file := func(flag string) ([]byte, error) {
		p, ok := flags[flag]
		if !ok {
			return nil, fmt.Errorf("the command line has no %s", flag)
		}
		return o.fileAt(p)
	}
	serving, err := o.pair(flags["--tls-cert-file"], flags["--tls-private-key-file"])
	if err != nil {
		return nil, fmt.Errorf("the serving certificate: %w", err)
	}
	clientCA, err := file("--client-ca-file")
	if err != nil {
		return nil, err
	}
	clientCAs := x509.NewCertPool()
	if !clientCAs.AppendCertsFromPEM(clientCA) {
		return nil, errors.New("--client-ca-file has no certificate")
	}
	verify := x509request.DefaultVerifyOptions()
	verify.Roots = clientCAs

	mappingData, err := file("--mapping-file")
	if err != nil {
		return nil, err
	}
	var mappings []pathMapping
	if err := yaml.Unmarshal(mappingData, &mappings); err != nil {
		return nil, fmt.Errorf("--mapping-file: %w", err)
	}
	i := slices.IndexFunc(mappings, func(m pathMapping) bool { return m.Path == "/clusters/" })
	if i < 0 {
		return nil, errors.New("--mapping-file has no /clusters/ mapping")
	}
	transport, err := o.shardTransport(mappings[i])
	if err != nil {
		return nil, fmt.Errorf("the /clusters/ mapping: %w", err)
	}
	rootConfig, err := o.kubeconfig(flags["--root-kubeconfig"])
	if err != nil {
		return nil, fmt.Errorf("--root-kubeconfig: %w", err)
	}
	root, err := dynamic.NewForConfig(rootConfig)
	if err != nil {
		return nil, err
	}
	var routed []routedMapping
	for _, m := range mappings {
		if m.Path == "/clusters/" {
			continue
		}
		r := routedMapping{path: m.Path}
		if r.backend, r.err = url.Parse(m.Backend); r.err == nil {
			r.transport, r.err = o.shardTransport(m)
		}
		routed = append(routed, r)
	}
	slices.SortStableFunc(routed, func(a, b routedMapping) int { return len(b.path) - len(a.path) })
	drop := []string{"system:masters", "system:kcp:logical-cluster-admin"}
	if g := flags["--authentication-drop-groups"]; g != "" {
		drop = append(drop, strings.Split(g, ",")...)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &FrontProxyDouble{Addr: l.Addr().String(), authn: x509request.New(verify, x509request.CommonNameUserConversion),
		drop: drop, root: root, index: o.Index, transport: transport, mappings: routed}
	p.URL = "https://" + p.Addr
	p.server = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, ErrorLog: log.New(io.Discard, "", 0),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{serving}, ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12}}
	go func() { _ = p.server.ServeTLS(l, "", "") }()
	return p, nil
}

// commandLineFlags are the --name=value arguments of a command line, by name.
func commandLineFlags(args []string) map[string]string {
	flags := map[string]string{}
	for _, a := range args {
		if name, value, ok := strings.Cut(a, "="); ok {
			flags[name] = value
		}
	}
	return flags
}

// Stop stops the front proxy double.
func (p *FrontProxyDouble) Stop() { _ = p.server.Close() }

// fileAt is the file a volume mounts at path.
func (o FrontProxyDoubleOptions) fileAt(p string) ([]byte, error) {
	data, ok := o.Files[path.Clean(p)]
	if !ok {
		return nil, fmt.Errorf("no volume of the pod mounts %s", p)
	}
	return data, nil
}

func (o FrontProxyDoubleOptions) pair(certFile, keyFile string) (tls.Certificate, error) {
	cert, err := o.fileAt(certFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := o.fileAt(keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(cert, key)
}

// shardTransport is how kcp-front-proxy reaches a shard for a mapping: verifying it with the
// mapping's backend_server_ca, as the mapping's proxy_client_cert.
func (o FrontProxyDoubleOptions) shardTransport(m pathMapping) (*http.Transport, error) {
	ca, err := o.fileAt(m.BackendServerCA)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return nil, errors.New("backend_server_ca has no certificate")
	}
	cert, err := o.pair(m.ProxyClientCert, m.ProxyClientKey)
	if err != nil {
		return nil, err
	}
	return &http.Transport{DialContext: o.Dial, TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}, nil
}

// kubeconfig is the client config of a kubeconfig file the pod mounts, whose CA and client
// certificate are files the pod mounts too.
func (o FrontProxyDoubleOptions) kubeconfig(p string) (*rest.Config, error) {
	data, err := o.fileAt(p)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, err
	}
	kctx := cfg.Contexts[cfg.CurrentContext]
	if kctx == nil || cfg.Clusters[kctx.Cluster] == nil || cfg.AuthInfos[kctx.AuthInfo] == nil {
		return nil, errors.New("the current context is incomplete")
	}
	cluster, user := cfg.Clusters[kctx.Cluster], cfg.AuthInfos[kctx.AuthInfo]
	ca, err := o.fileAt(cluster.CertificateAuthority)
	if err != nil {
		return nil, err
	}
	cert, err := o.fileAt(user.ClientCertificate)
	if err != nil {
		return nil, err
	}
	key, err := o.fileAt(user.ClientKey)
	if err != nil {
		return nil, err
	}
	// kcp-front-proxy reads the Shards of the root workspace (kcp's informers are scoped to
	// root).
	return &rest.Config{Host: strings.TrimSuffix(cluster.Server, "/") + "/clusters/root", Dial: o.Dial, Timeout: 15 * time.Second,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca, CertData: cert, KeyData: key}}, nil
}

// ServeHTTP authenticates the caller and proxies a workspace's request to its shard.
func (p *FrontProxyDouble) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	switch req.URL.Path {
	case "/readyz", "/livez", "/healthz":
		_, _ = w.Write([]byte("ok"))
		return
	}
	resp, ok, err := p.authn.AuthenticateRequest(req)
	if err != nil {
		writeStatus(w, apierrors.NewUnauthorized("Unauthorized"))
		return
	}
	user, groups := "system:anonymous", []string{"system:unauthenticated"}
	if ok {
		user, groups = resp.User.GetName(), slices.DeleteFunc(resp.User.GetGroups(), func(g string) bool { return slices.Contains(p.drop, g) })
	}
	if !strings.HasPrefix(req.URL.Path, "/clusters/") {
		p.serveMapping(w, req, user, groups)
		return
	}
	ws, isWorkspace := requestWorkspace(req.URL.EscapedPath())
	shardName, hosted := p.index[ws]
	if !isWorkspace || !hosted {
		writeStatus(w, apierrors.NewNotFound(metav1.SchemeGroupVersion.WithResource("workspaces").GroupResource(), ws))
		return
	}
	shard, err := p.root.Resource(ShardGVR).Namespace("").Get(req.Context(), shardName, metav1.GetOptions{})
	if err != nil {
		writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("shard %q of workspace %s: %v", shardName, ws, err)))
		return
	}
	baseURL, _, _ := unstructured.NestedString(shard.Object, "spec", "baseURL")
	backend, err := url.Parse(baseURL)
	if err != nil || backend.Host == "" {
		writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("shard %q has no base URL %q", shardName, baseURL)))
		return
	}
	p.proxy(w, req, user, groups, backend, p.transport)
}

// serveMapping sends a request outside /clusters/ by the longest mapping whose path
// prefixes it, as kcp-front-proxy does; a path no mapping has is not found.
func (p *FrontProxyDouble) serveMapping(w http.ResponseWriter, req *http.Request, user string, groups []string) {
	for _, m := range p.mappings {
		if !strings.HasPrefix(req.URL.Path, m.path) {
			continue
		}
		if m.err != nil {
			writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("the mapping of %s: %v", m.path, m.err)))
			return
		}
		p.proxy(w, req, user, groups, m.backend, m.transport)
		return
	}
	writeStatus(w, apierrors.NewNotFound(metav1.SchemeGroupVersion.WithResource("paths").GroupResource(), req.URL.Path))
}

// proxy sends req to backend over transport with the caller's user and groups in X-Remote-*
// headers, and nothing the caller sent to pass for someone else.
func (p *FrontProxyDouble) proxy(w http.ResponseWriter, req *http.Request, user string, groups []string, backend *url.URL, transport *http.Transport) {
	out := req.Clone(req.Context())
	clearIdentityHeaders(out.Header)
	out.Header.Set(remoteUserHeader, user)
	for _, g := range groups {
		out.Header.Add(remoteGroupHeader, g)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host, r.Out.Host = backend.Scheme, backend.Host, backend.Host
		},
		Transport: transport, ErrorLog: log.New(io.Discard, "", 0),
	}
	proxy.ServeHTTP(w, out)
}
