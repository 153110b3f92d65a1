package kcpclient

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

func TestNewChoosesTheDialer(t *testing.T) {
	host := &rest.Config{Host: "https://127.0.0.1:6443"}
	for _, name := range []string{"", ServiceDNSDialer} {
		d, err := New(name, host)
		require.NoError(t, err, name)
		assert.IsType(t, ServiceDNS{}, d, "%q is the in-cluster default", name)
	}
	d, err := New(PortForwardDialer, host)
	require.NoError(t, err)
	assert.IsType(t, &PortForward{}, d)

	_, err = New(PortForwardDialer, nil)
	assert.ErrorContains(t, err, "needs a host cluster")
	_, err = New("service-proxy", host)
	assert.ErrorContains(t, err, `unknown kcp dialer "service-proxy"`)
}

func TestEndpointsNameTheServices(t *testing.T) {
	rs := rootShardFixture()
	ep := RootShardEndpoint(rs)
	assert.Equal(t, "root-kcp.team-a.svc.cluster.local", ep.ServerName())
	assert.Equal(t, "https://root-kcp.team-a.svc.cluster.local:6443", ep.URL())
	assert.Equal(t, "team-a/root-kcp", ep.String())
	assert.Equal(t, map[string]string{"app.kubernetes.io/instance": "root", "app.kubernetes.io/component": "kcp", "operator.kcp.io/rootshard": "root"}, ep.Selector)
	// The URL is the one the pods' kubeconfigs hold, unless the spec overrides theirs, and
	// the names are the builders'.
	assert.Equal(t, rootshard.Server(rs).BaseURL(), ep.URL())
	assert.Equal(t, rootshard.Server(rs).SelectorLabels(), ep.Selector)
	proxy := frontproxy.RootShardProxy{RootShard: rs}
	pep := RootShardProxyEndpoint(rs)
	assert.Equal(t, proxy.ServiceName(), pep.Service)
	assert.Equal(t, proxy.SelectorLabels(), pep.Selector)
	assert.Equal(t, "https://root-proxy.team-a.svc.cluster.local:6443", pep.URL())
	assert.Contains(t, leafNames(proxy.Leaves()), pki.RootShardProxyServerSecretName(rs.Name))
	assert.Contains(t, leafNames(rootshard.Server(rs).Leaves()), pki.ServerSecretName(rs.Name))
	assert.Equal(t, rootshard.OperatorSecretName(rs), pki.OperatorSecretName(rs.Name))

	sh := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "team-a"}}
	sh.Spec.ClusterDomain = "corp.internal"
	sh.Spec.ShardBaseURL = "https://eu.kcp.example.com:6443"
	ep = ShardEndpoint(sh)
	assert.Equal(t, "https://eu-shard-kcp.team-a.svc.corp.internal:6443", ep.URL(), "the dialer reaches the Service, whatever the shard announces")
	assert.Equal(t, shard.Server(sh, rs).SelectorLabels(), ep.Selector)
	assert.Contains(t, leafNames(shard.Server(sh, rs).Leaves()), pki.ServerSecretName(sh.Name))
}

// leafNames are the names of leaves.
func leafNames(leaves []pki.Leaf) []string {
	var names []string
	for _, l := range leaves {
		names = append(names, l.Name)
	}
	return names
}

// The clients present the server's identity from <rs>-kcp-operator, verify kcp with the CA
// of the server certificate of what they dial, reach the workspace's path, and reuse their
// connection until the credentials change.
func TestClientsPresentTheServersIdentity(t *testing.T) {
	rs := rootShardFixture()
	serverCA, clientCA := newCA(t, "root-server-ca"), newCA(t, "root-client-ca")
	ep := RootShardEndpoint(rs)
	serving := serverCA.issue(t, "root", nil, []string{ep.ServerName()}, x509.ExtKeyUsageServerAuth)

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(clientCA.certPEM)
	var seen []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := r.TLS.PeerCertificates[0]
		seen = append(seen, c.Subject.CommonName+" "+strings.Join(c.Subject.Organization, ",")+" "+r.URL.Path)
		_, _ = w.Write([]byte("ok"))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serving.pair(t)}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	dials := 0
	dialer := ServiceDNS{Resolve: func(hostport string) string {
		assert.Equal(t, "root-kcp.team-a.svc.cluster.local:6443", hostport)
		dials++
		return srv.Listener.Addr().String()
	}}

	secrets := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	clients := NewClients(dialer, corev1listers.NewSecretLister(secrets))
	_, err := clients.RootShard(rs, "root")
	var notReady *NotReadyError
	require.ErrorAs(t, err, &notReady, "without the identity there is no client")
	assert.Contains(t, err.Error(), "team-a/root-kcp-operator")

	identity := clientCA.issue(t, "system:kcp-operator", []string{"system:kcp:admin"}, nil, x509.ExtKeyUsageClientAuth)
	require.NoError(t, secrets.Add(tlsSecret("root-kcp-operator", identity, clientCA)))
	_, err = clients.RootShard(rs, "root")
	require.ErrorAs(t, err, &notReady, "without the server CA there is no client")
	require.NoError(t, secrets.Add(tlsSecret("root-server", serving, serverCA)))

	get := func(workspace, path string) {
		t.Helper()
		cfg, err := clients.RootShard(rs, workspace)
		require.NoError(t, err)
		kube, err := kubernetes.NewForConfig(cfg)
		require.NoError(t, err)
		body, err := kube.Discovery().RESTClient().Get().AbsPath(path).DoRaw(context.Background())
		require.NoError(t, err)
		assert.Equal(t, "ok", string(body))
	}
	get("root", "/readyz")
	get("", "/readyz")
	assert.Equal(t, []string{"system:kcp-operator system:kcp:admin /clusters/root/readyz", "system:kcp-operator system:kcp:admin /readyz"}, seen)
	assert.Equal(t, 1, dials, "one connection serves both")

	// A renewed identity takes a new connection.
	renewed := clientCA.issue(t, "system:kcp-operator", []string{"system:kcp:admin"}, nil, x509.ExtKeyUsageClientAuth)
	require.NoError(t, secrets.Update(tlsSecret("root-kcp-operator", renewed, clientCA)))
	get("root", "/readyz")
	assert.Equal(t, 2, dials)

	// A server that another CA signed is not believed.
	stranger := newCA(t, "stranger").issue(t, "root", nil, []string{ep.ServerName()}, x509.ExtKeyUsageServerAuth)
	srv.TLS.Certificates = []tls.Certificate{stranger.pair(t)}
	srv.CloseClientConnections()
	cfg, err := clients.RootShard(rs, "root")
	require.NoError(t, err)
	kube, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	_, err = kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(context.Background())
	var unknown x509.UnknownAuthorityError
	assert.True(t, errors.As(err, &unknown), "got %v", err)
}

func TestPortForwardPicksAReadyPod(t *testing.T) {
	now := time.Now()
	pod := func(name string, age time.Duration, phase corev1.PodPhase, ready bool, deleting bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", Labels: map[string]string{"app": "kcp"},
			CreationTimestamp: metav1.NewTime(now.Add(-age))}, Status: corev1.PodStatus{Phase: phase}}
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{Time: now}
		}
		return p
	}
	other := pod("other", 0, corev1.PodRunning, true, false)
	other.Labels = map[string]string{"app": "cache"}
	ep := Endpoint{Namespace: "team-a", Service: "root-kcp", Port: 6443, Selector: map[string]string{"app": "kcp"}}
	for name, tc := range map[string]struct {
		pods []*corev1.Pod
		want string
	}{
		"the newest ready one": {pods: []*corev1.Pod{pod("old", time.Hour, corev1.PodRunning, true, false),
			pod("new", time.Minute, corev1.PodRunning, true, false)}, want: "new"},
		"not an unready, pending or deleting one": {pods: []*corev1.Pod{pod("ready", time.Hour, corev1.PodRunning, true, false),
			pod("unready", 0, corev1.PodRunning, false, false), pod("pending", 0, corev1.PodPending, true, false),
			pod("deleting", 0, corev1.PodRunning, true, true), other}, want: "ready"},
		"none":             {pods: []*corev1.Pod{pod("unready", 0, corev1.PodRunning, false, false), other}},
		"another selector": {pods: []*corev1.Pod{other}},
	} {
		t.Run(name, func(t *testing.T) {
			kube := fake.NewClientset()
			for _, p := range tc.pods {
				_, err := kube.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			got, err := (&PortForward{kube: kube}).readyPod(context.Background(), ep)
			if tc.want == "" {
				assert.ErrorContains(t, err, "team-a/root-kcp has no ready pod to port-forward to")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func rootShardFixture() *operatorv1alpha1.RootShard {
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"}}
	rs.Spec.External.Hostname = "kcp.example.com"
	return rs
}

type testCert struct {
	certPEM, keyPEM []byte
	cert            *x509.Certificate
	key             *ecdsa.PrivateKey
}

func newCA(t *testing.T, name string) *testCert {
	return issue(t, nil, &x509.Certificate{Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign})
}

func (ca *testCert) issue(t *testing.T, cn string, groups, dnsNames []string, usage x509.ExtKeyUsage) *testCert {
	return issue(t, ca, &x509.Certificate{Subject: pkix.Name{CommonName: cn, Organization: groups}, DNSNames: dnsNames,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}})
}

var serial int64

func issue(t *testing.T, ca *testCert, tmpl *x509.Certificate) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial++
	tmpl.SerialNumber = big.NewInt(serial)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	parent, signer := tmpl, key
	if ca != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return &testCert{certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), cert: cert, key: key}
}

func (c *testCert) pair(t *testing.T) tls.Certificate {
	p, err := tls.X509KeyPair(c.certPEM, c.keyPEM)
	require.NoError(t, err)
	return p
}

func tlsSecret(name string, leaf, ca *testCert) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: leaf.certPEM, corev1.TLSPrivateKeyKey: leaf.keyPEM, corev1.ServiceAccountRootCAKey: ca.certPEM}}
}

var _ net.Conn = (*streamConn)(nil)

// TestNoDialerReachesNothing: --kcp-dialer=none gives a dialer whose every dial fails at once
// with ErrNoDialer, which says which flag made it so.
func TestNoDialerReachesNothing(t *testing.T) {
	d, err := New(NoDialer, nil)
	require.NoError(t, err)
	conn, err := d.Dial(t.Context(), Endpoint{Namespace: "team-a", Service: "root-kcp", Port: 6443})
	assert.Nil(t, conn)
	require.ErrorIs(t, err, ErrNoDialer)
	assert.Contains(t, err.Error(), "--kcp-dialer=none")
	assert.Contains(t, Dialers, NoDialer, "--kcp-dialer accepts it")
}

// TestRootShardProxyClients: the config of a workspace through the RootShard's internal front
// proxy dials the proxy's Service, verifies the proxy by the CA of its serving certificate's
// Secret (root-proxy-server), and presents the server's identity.
func TestRootShardProxyClients(t *testing.T) {
	rs := rootShardFixture()
	serverCA, clientCA := newCA(t, "root-server-ca"), newCA(t, "root-client-ca")
	const name = "root-proxy.team-a.svc.cluster.local"
	serving := serverCA.issue(t, "root-proxy", nil, []string{name}, x509.ExtKeyUsageServerAuth)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(clientCA.certPEM)
	var seen []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.TLS.PeerCertificates[0].Subject.CommonName+" "+r.URL.Path)
		_, _ = w.Write([]byte("ok"))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serving.pair(t)}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	dialer := ServiceDNS{Resolve: func(hostport string) string {
		assert.Equal(t, name+":6443", hostport, "the proxy's Service")
		return srv.Listener.Addr().String()
	}}
	secrets := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	clients := NewClients(dialer, corev1listers.NewSecretLister(secrets))
	identity := clientCA.issue(t, "system:kcp-operator", []string{"system:kcp:admin"}, nil, x509.ExtKeyUsageClientAuth)
	require.NoError(t, secrets.Add(tlsSecret("root-kcp-operator", identity, clientCA)))
	_, err := clients.RootShardProxy(rs, "root:team-b")
	var notReady *NotReadyError
	require.ErrorAs(t, err, &notReady, "without the proxy's serving certificate there is no client")
	assert.Contains(t, err.Error(), "team-a/root-proxy-server")
	require.NoError(t, secrets.Add(tlsSecret("root-proxy-server", serving, serverCA)))

	cfg, err := clients.RootShardProxy(rs, "root:team-b")
	require.NoError(t, err)
	assert.Equal(t, "https://"+name+":6443/clusters/root:team-b", cfg.Host)
	kube, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	body, err := kube.Discovery().RESTClient().Get().AbsPath("/api").DoRaw(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "ok", string(body))
	assert.Equal(t, []string{"system:kcp-operator /clusters/root:team-b/api"}, seen)
}

// dialerFunc is a Dialer of a function.
type dialerFunc func(ctx context.Context, ep Endpoint) (net.Conn, error)

func (f dialerFunc) Dial(ctx context.Context, ep Endpoint) (net.Conn, error) { return f(ctx, ep) }

// TestEtcdDialsWithTheEtcdDialer: the managed etcd's client dials with the dialer
// WithEtcdDialer gives (--etcd-dialer), kcp's clients with the other one; without it, both
// dial with the same.
func TestEtcdDialsWithTheEtcdDialer(t *testing.T) {
	ca := newCA(t, "root-etcd-client-ca")
	client := ca.issue(t, "kcp", nil, nil, x509.ExtKeyUsageClientAuth)
	secrets := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	require.NoError(t, secrets.Add(tlsSecret("root-etcd-client", client, ca)))
	ep := Endpoint{Namespace: "team-a", Service: "root-etcd", Port: 2379}
	recording := func(name string, dialed *[]string) Dialer {
		return dialerFunc(func(_ context.Context, ep Endpoint) (net.Conn, error) {
			*dialed = append(*dialed, ep.Service)
			return nil, errors.New(name + " dialed")
		})
	}
	get := func(clients *Clients) error {
		cfg, err := clients.Etcd(ep, "root-etcd-client")
		require.NoError(t, err)
		kube, err := kubernetes.NewForConfig(cfg)
		require.NoError(t, err)
		_, err = kube.Discovery().RESTClient().Get().AbsPath("/health").DoRaw(context.Background())
		return err
	}

	var kcpDials, etcdDials []string
	err := get(NewClients(recording("kcp's dialer", &kcpDials), corev1listers.NewSecretLister(secrets)).
		WithEtcdDialer(recording("etcd's dialer", &etcdDials)))
	require.ErrorContains(t, err, "etcd's dialer dialed")
	assert.Empty(t, kcpDials)
	assert.Equal(t, []string{"root-etcd"}, etcdDials)

	kcpDials = nil
	err = get(NewClients(recording("kcp's dialer", &kcpDials), corev1listers.NewSecretLister(secrets)))
	require.ErrorContains(t, err, "kcp's dialer dialed")
	assert.Equal(t, []string{"root-etcd"}, kcpDials)
}
