package framework

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

// KcpDouble is the smallest honest stand-in for a kcp shard that this machine can run, since
// kcp itself cannot be built here. A reverse proxy in the test process serves kcp's
// addresses with the shard's realized serving certificate, authenticates callers by client
// certificates of the realized client CA bundle, and forwards /clusters/<workspace>/<rest>
// as /<rest> to a kube-apiserver of its own (on the stack's etcd, under a prefix of its
// own), passing the verified identity (CN as user, O as groups) in X-Remote-* headers over
// a request-header client certificate, as kcp's front proxy does with a shard. Paths
// outside /clusters (/readyz, /livez, /version, /api…) go through unchanged, and a request
// without a client certificate is anonymous. The backend enforces its real RBAC, so a
// binding made through the double holds for the next request, and it serves kcp's Shard
// API (shards.core.kcp.io/v1alpha1).
//
// What it does not model:
//   - workspaces: every /clusters/<workspace> is the same single space, with one RBAC, one
//     set of Shards and one set of namespaces; a workspace that does not exist answers
//     like root, and there is no Workspace, LogicalCluster or APIExport API;
//   - kcp's authorizers (workspace content access, bootstrap policy, maximal permission
//     policy): only kube-apiserver's RBAC decides, system:masters is admin as on a shard
//     (kcp's front proxy would drop that group), and system:kcp:admin is bound to
//     cluster-admin as kcp's bootstrap policy binds it (kcp v0.32.3
//     pkg/authorization/bootstrap/policy.go, "system:kcp:admin:cluster-admin");
//   - authentication other than client certificates: bearer tokens and Authorization
//     headers are dropped, and there is no OIDC or ServiceAccount of kcp's;
//   - a client certificate that kcp's client CAs did not sign is answered 401 whatever
//     its issuer's name; kcp names its client CAs in the TLS handshake, so a Go client
//     holding a certificate of a differently named CA would send none and be anonymous;
//   - kcp's own controllers: nobody sets a Shard's status, and no virtual workspace,
//     cache server or front-proxy routing stands behind the URLs it holds.
type KcpDouble struct {
	// URL is the proxy's address on loopback; a workspace is under URL/clusters/<workspace>.
	// It stays the same across Stop and Start.
	URL string
	// ServerCA verifies the proxy's serving certificate for ServerName.
	ServerCA   []byte
	ServerName string
	// AdminKubeconfig is a kubeconfig file that reaches the backend kube-apiserver directly
	// as a cluster admin (system:masters), for kubectl.
	AdminKubeconfig string

	stack       *Stack
	backend     shardAPIServer
	proxy       *workspaceProxy
	tlsConfig   *tls.Config
	adminConfig *rest.Config

	mu     sync.Mutex
	proc   *localstack.Process
	server *http.Server

	servingMu sync.Mutex
	// serving are the serving certificates, chosen by the name the client asks for.
	serving []tls.Certificate
}

// ServeAs adds a serving certificate (with its chain) and key, such as a Shard's tls.crt and
// tls.key: a client asking for one of its names gets it, so that one double serves a root
// shard and its shards. The first certificate serves any other name.
func (d *KcpDouble) ServeAs(certPEM, keyPEM []byte) error {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return err
	}
	d.servingMu.Lock()
	defer d.servingMu.Unlock()
	d.serving = append(d.serving, pair)
	return nil
}

// certificateFor picks the serving certificate for the name a client asks for.
func (d *KcpDouble) certificateFor(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	d.servingMu.Lock()
	defer d.servingMu.Unlock()
	for i := range d.serving {
		if hello.ServerName != "" && hello.SupportsCertificate(&d.serving[i]) == nil {
			return &d.serving[i], nil
		}
	}
	return &d.serving[0], nil
}

// HostOnly makes the double a shard that hosts only the workspaces named (paths such as
// root:team-a): a request for another one is answered 429 "Not found on this shard", with
// Retry-After, as kcp v0.32.3's local proxy answers for a workspace on another shard
// (pkg/server/localproxy.go). Without it, the double hosts every workspace.
func (d *KcpDouble) HostOnly(workspaces ...string) { d.proxy.hostOnly(workspaces) }

// AcceptProxy makes the double trust a front proxy, as kcp's --requestheader-client-ca-file
// (caPEM) and --requestheader-allowed-names do: a client certificate of that CA whose common
// name is one of allowedNames may assert the caller's identity in X-Remote-User and
// X-Remote-Group; any other certificate is then tried as a client
// certificate of the client CA bundle, as kube-apiserver tries its authenticators in turn.
func (d *KcpDouble) AcceptProxy(caPEM []byte, allowedNames ...string) error {
	return d.proxy.acceptProxy(caPEM, allowedNames)
}

// Addr is the double's host:port on loopback, for an SNIRouter.
func (d *KcpDouble) Addr() string { return strings.TrimPrefix(d.URL, "https://") }

// KcpDoubleOptions are what a kcp double serves and trusts: the same as a stand-in's.
type KcpDoubleOptions = StandInOptions

// StartKcpDouble starts a kcp double and returns once it serves kcp's Shard API. Stop it with
// Stop (t.Cleanup); the stack's Stop stops its backend too.
func (s *Stack) StartKcpDouble(ctx context.Context, o KcpDoubleOptions) (*KcpDouble, error) {
	name := "kcp-double-" + o.Name
	dir := s.Path(name, "pki")
	backendCA, err := localstack.LoadOrCreateCA(dir, "backend-ca")
	if err != nil {
		return nil, err
	}
	requestHeaderCA, err := localstack.LoadOrCreateCA(dir, "requestheader-ca")
	if err != nil {
		return nil, err
	}
	serving, err := backendCA.Issue(dir, "backend-serving", localstack.CertSpec{CommonName: name, DNSNames: []string{"localhost"},
		IPs: []net.IP{net.ParseIP("127.0.0.1")}, Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	if err != nil {
		return nil, err
	}
	// The backend believes the X-Remote-* headers of this certificate only.
	const proxyName = "kcp-front-proxy"
	proxyCert, err := requestHeaderCA.ClientCert(dir, "front-proxy-client", proxyName)
	if err != nil {
		return nil, err
	}
	admin, err := backendCA.ClientCert(dir, "admin", name+"-admin", "system:masters")
	if err != nil {
		return nil, err
	}
	port, err := localstack.FreePort()
	if err != nil {
		return nil, err
	}
	d := &KcpDouble{
		ServerCA: o.ServerCA, ServerName: o.ServerName, AdminKubeconfig: s.Path(name, "admin.kubeconfig"), stack: s,
		backend: shardAPIServer{
			name: name, port: port,
			servingCert: serving.CertFile, servingKey: serving.KeyFile, clientCA: backendCA.CertFile,
			extraArgs: []string{
				"--requestheader-client-ca-file=" + requestHeaderCA.CertFile,
				"--requestheader-allowed-names=" + proxyName,
				"--requestheader-username-headers=" + remoteUserHeader,
				"--requestheader-group-headers=" + remoteGroupHeader,
				"--requestheader-extra-headers-prefix=" + remoteExtraPrefix,
			},
			serverCA: backendCA.CertPEM, serverName: "localhost",
		},
	}
	if err := localstack.WriteKubeconfig(d.AdminKubeconfig, d.backend.url(), backendCA.CertPEM, admin); err != nil {
		return nil, err
	}
	if d.adminConfig, err = clientcmd.BuildConfigFromFlags("", d.AdminKubeconfig); err != nil {
		return nil, err
	}
	backendURL, err := url.Parse(d.backend.url())
	if err != nil {
		return nil, err
	}
	if d.proxy, err = newWorkspaceProxy(workspaceProxyConfig{clientCA: o.ClientCA, backend: backendURL,
		backendCA: backendCA.CertPEM, proxyCert: proxyCert.CertPEM, proxyKey: proxyCert.KeyPEM}); err != nil {
		return nil, err
	}
	servingPair, err := tls.X509KeyPair(o.ServingCert, o.ServingKey)
	if err != nil {
		return nil, fmt.Errorf("the double's serving certificate: %w", err)
	}
	// Request a client certificate without naming the CAs, so that every client sends the
	// one it has; the proxy verifies it, and answers 401 for a stranger's.
	d.serving = []tls.Certificate{servingPair}
	d.tlsConfig = &tls.Config{GetCertificate: d.certificateFor, ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12}

	if d.proc, err = s.startShardAPIServer(ctx, d.backend); err != nil {
		return nil, err
	}
	if err := d.serve(ctx, "127.0.0.1:0"); err != nil {
		d.Stop()
		return nil, err
	}
	d.URL = "https://" + d.server.Addr
	return d, nil
}

// Stop stops the proxy and the backend: the URL then refuses connections. The data stays,
// for Start.
func (d *KcpDouble) Stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.server != nil {
		_ = d.server.Close()
	}
	d.proc.Stop()
}

// Start starts a stopped double again on the same address, with the data it had, and
// returns once it serves; it does nothing while the double runs.
func (d *KcpDouble) Start(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if done, _ := d.proc.Exited(); !done {
		return nil
	}
	p, err := d.proc.Rerun()
	if err != nil {
		return err
	}
	d.stack.Track(d.proc, p)
	d.proc = p
	if err := d.backend.waitForReady(ctx, p); err != nil {
		return err
	}
	return d.serve(ctx, d.server.Addr)
}

// Restart stops the double and starts it again, as an upgrade of kcp would.
func (d *KcpDouble) Restart(ctx context.Context) error {
	d.Stop()
	return d.Start(ctx)
}

// serve installs the Shard API into the backend, then serves the proxy on addr (the same
// one again after a Stop) and waits until it answers. The caller holds d.mu or owns d.
func (d *KcpDouble) serve(ctx context.Context, addr string) error {
	if err := d.applyShardCRD(ctx); err != nil {
		return err
	}
	var l net.Listener
	// Right after a Stop, the port may take a moment to be free again.
	if err := localstack.Poll(ctx, d.backend.name+" to listen on "+addr, 30*time.Second, []*localstack.Process{d.proc}, func(context.Context) (bool, error) {
		var err error
		l, err = net.Listen("tcp", addr)
		return err == nil, err
	}); err != nil {
		return err
	}
	d.server = &http.Server{Addr: l.Addr().String(), Handler: d.proxy, TLSConfig: d.tlsConfig, ReadHeaderTimeout: 30 * time.Second}
	go func(srv *http.Server) { _ = srv.ServeTLS(l, "", "") }(d.server)
	return waitForReadyz(ctx, d.backend.name+"'s proxy", "https://"+d.server.Addr, d.ServerCA, d.ServerName, []*localstack.Process{d.proc})
}

// AdminConfig is a client config of the backend kube-apiserver, directly and as a cluster
// admin (system:masters): to seed and inspect what the double holds, in any workspace.
func (d *KcpDouble) AdminConfig() *rest.Config {
	return d.stack.Recorder.Wrap(rest.CopyConfig(d.adminConfig))
}

// WorkspaceConfig is a client config of the workspace (such as root or root:team-a) through
// the double's proxy, authenticating with a PEM client certificate and key; caPEM verifies
// the serving certificate, and nil means ServerCA.
func (d *KcpDouble) WorkspaceConfig(workspace string, certPEM, keyPEM, caPEM []byte) *rest.Config {
	if caPEM == nil {
		caPEM = d.ServerCA
	}
	return d.stack.Recorder.Wrap(&rest.Config{
		Host:            d.URL + "/clusters/" + workspace,
		TLSClientConfig: rest.TLSClientConfig{ServerName: d.ServerName, CAData: caPEM, CertData: certPEM, KeyData: keyPEM},
	})
}

// WorkspaceConfigFor is WorkspaceConfig with the client certificate, key and CA of the
// current context of a kubeconfig, such as one minted by the kubeconfig subresource or
// written by a Kubeconfig object. An empty workspace means the one of the kubeconfig's server
// URL (…/clusters/<workspace>).
func (d *KcpDouble) WorkspaceConfigFor(workspace string, kubeconfig []byte) (*rest.Config, error) {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, err
	}
	kctx := cfg.Contexts[cfg.CurrentContext]
	if kctx == nil || cfg.Clusters[kctx.Cluster] == nil || cfg.AuthInfos[kctx.AuthInfo] == nil {
		return nil, errors.New("the kubeconfig's current context is incomplete")
	}
	cluster, user := cfg.Clusters[kctx.Cluster], cfg.AuthInfos[kctx.AuthInfo]
	if workspace == "" {
		_, after, found := strings.Cut(cluster.Server, "/clusters/")
		if !found {
			return nil, fmt.Errorf("the kubeconfig's server %s names no workspace", cluster.Server)
		}
		workspace, _, _ = strings.Cut(after, "/")
	}
	return d.WorkspaceConfig(workspace, user.ClientCertificateData, user.ClientKeyData, cluster.CertificateAuthorityData), nil
}

var clusterPortForwardGVR = localstack.ClusterPortForwardResource

// ForwardPods makes kcp's port (6443) of every pod in namespace lead to the double, as if
// the double ran in them: a port-forward through kube-apiserver to such a pod (the server's
// port-forward dialer) reaches the double, which answers with the serving certificate of
// the name the client asks for (ServeAs). The returned function undoes it.
func (d *KcpDouble) ForwardPods(ctx context.Context, namespace string) (func(context.Context) error, error) {
	return d.stack.ForwardPodsTo(ctx, namespace, strings.TrimPrefix(d.URL, "https://"), d.backend.name+"-"+namespace)
}

// ForwardPodsTo makes kcp's port (6443) of every pod in namespace lead to addr (host:port,
// such as an SNIRouter's), through a kwok ClusterPortForward called name. The returned
// function undoes it.
func (s *Stack) ForwardPodsTo(ctx context.Context, namespace, addr, name string) (func(context.Context) error, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	portNumber, err := strconv.Atoi(port)
	if err != nil {
		return nil, err
	}
	forward := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterPortForward",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"selector": map[string]any{"matchNamespaces": []any{namespace}},
			"forwards": []any{map[string]any{"ports": []any{int64(6443)}, "target": map[string]any{"address": host, "port": int64(portNumber)}}},
		},
	}}
	client := s.Dynamic.Resource(clusterPortForwardGVR)
	if _, err := client.Apply(ctx, name, forward, localstack.ApplyOptions); err != nil {
		return nil, fmt.Errorf("forwarding the pods of %s to %s: %w", namespace, addr, err)
	}
	return func(ctx context.Context) error {
		err := client.Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}, nil
}
