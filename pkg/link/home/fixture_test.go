package home

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	operatorlisters "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/link/linktest"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// testCA is a CA made in a test, valid from an hour ago to a day from now.
type testCA struct{ linktest.CA }

func newKey(t testing.TB) *ecdsa.PrivateKey { return linktest.NewKey(t) }

func newCA(t testing.TB, cn string) testCA {
	return testCA{linktest.NewCA(t, cn, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))}
}

func (ca testCA) pem() []byte { return ca.PEM() }

func pemOf(typ string, der []byte) []byte { return linktest.PEM(typ, der) }

// issue signs a leaf with dns and uris SANs for usage, and returns it as a TLS pair.
func (ca testCA) issue(t testing.TB, cn string, dns, uris []string, usage x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	leaf, key := ca.Issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: dns, URIs: linktest.URIs(t, uris...),
		ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature})
	return tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}
}

// csr is a PEM CSR of cn, o and dns, with a new key.
func csr(t *testing.T, cn string, o, dns []string, uris ...string) []byte {
	t.Helper()
	return linktest.CSR(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: o}, DNSNames: dns,
		URIs: linktest.URIs(t, uris...)}, nil)
}

// fakeSigner records what it is asked and answers resp or err.
type fakeSigner struct {
	mu    sync.Mutex
	asked []Signing
	resp  link.SignResponse
	err   error
}

func (f *fakeSigner) Sign(_ context.Context, sg Signing) (link.SignResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, sg)
	return f.resp, f.err
}

func (f *fakeSigner) signings() []Signing {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Signing(nil), f.asked...)
}

// fixture is a listener on loopback with real TLS over caches filled by the test: the
// RootShard a/root with its link CA, its serving certificate and its shard-join Secret, and
// its Link eu-1, which admits Shards.
type fixture struct {
	t                  *testing.T
	server             *Server
	url                string
	ca                 testCA
	rs                 *operatorv1alpha1.RootShard
	link               *operatorv1alpha1.Link
	links, rootShards  cache.Indexer
	secrets            cache.Indexer
	signer             *fakeSigner
	recorder           *record.FakeRecorder
	client, stranger   tls.Certificate
	serverName         string
	heartbeat          time.Duration
	eventsHandlerCalls int
}

const identity = "eu-1.links.example.com"

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, ca: newCA(t, "root-link-ca"), signer: &fakeSigner{resp: link.SignResponse{Certificate: []byte("chain"), CA: []byte("ca")}},
		recorder: record.NewFakeRecorder(100), heartbeat: time.Hour}
	f.rs = &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "root", UID: "rs-uid"}}
	f.link = &operatorv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "eu-1", UID: "link-uid"},
		Spec: operatorv1alpha1.LinkSpec{RootShardRef: corev1.LocalObjectReference{Name: "root"}, Identity: identity,
			Consumers: []operatorv1alpha1.LinkConsumerKind{operatorv1alpha1.LinkConsumerShard}, DNSNames: []string{"*.eu.example.com"}}}
	f.serverName = linkpki.ServerName(f.rs)
	index := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	f.links, f.rootShards, f.secrets = cache.NewIndexer(cache.MetaNamespaceKeyFunc, index),
		cache.NewIndexer(cache.MetaNamespaceKeyFunc, index), cache.NewIndexer(cache.MetaNamespaceKeyFunc, index)
	require.NoError(t, f.links.Add(f.link))
	require.NoError(t, f.rootShards.Add(f.rs))
	f.putSecret(linkpki.CAName(f.rs), "link-ca", "", map[string][]byte{corev1.TLSCertKey: f.ca.pem()})
	serving := f.ca.issue(t, "root-link-server", []string{f.serverName}, nil, x509.ExtKeyUsageServerAuth)
	key, err := x509.MarshalPKCS8PrivateKey(serving.PrivateKey)
	require.NoError(t, err)
	f.putSecret(linkpki.ServerCertificateName(f.rs), linkpki.ServerRole, "", map[string][]byte{
		corev1.TLSCertKey: pemOf("CERTIFICATE", serving.Certificate[0]), corev1.TLSPrivateKeyKey: pemOf("PRIVATE KEY", key)})
	f.putSecret(reference.ShardJoin.Name("root"), string(reference.ShardJoin), reference.ShardJoin.Type(), map[string][]byte{
		"server-ca.crt": []byte("server CA"), "server-ca.key": []byte("never sent"), reference.RootShardURLKey: []byte("https://root")})
	f.client = f.ca.issue(t, identity, []string{identity}, []string{link.URI("a", "eu-1", "link-uid")}, x509.ExtKeyUsageClientAuth)
	f.stranger = newCA(t, "stranger").issue(t, identity, []string{identity}, []string{link.URI("a", "eu-1", "link-uid")}, x509.ExtKeyUsageClientAuth)
	return f
}

// putSecret adds or replaces a Secret of the RootShard's making.
func (f *fixture) putSecret(name, component string, typ corev1.SecretType, data map[string][]byte) {
	labels := pki.Labels(rootshard.Kind, f.rs.Name, component)
	labels[pki.LabelOwnerUID] = string(f.rs.UID)
	require.NoError(f.t, f.secrets.Update(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.rs.Namespace, Name: name, Labels: labels,
		ResourceVersion: time.Now().String()}, Type: typ, Data: data}))
}

// start serves the listener over the fixture's caches.
func (f *fixture) start(events http.Handler) {
	f.server = New(Config{
		Links:        operatorlisters.NewLinkLister(f.links),
		RootShards:   operatorlisters.NewRootShardLister(f.rootShards),
		CacheServers: operatorlisters.NewCacheServerLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})),
		Secrets:      corev1listers.NewSecretLister(f.secrets),
		Signer:       f.signer, Recorder: f.recorder, Events: events, Heartbeat: f.heartbeat,
	})
	srv := httptest.NewUnstartedServer(f.server.Handler())
	srv.TLS = f.server.TLSConfig()
	srv.EnableHTTP2 = true
	srv.StartTLS()
	f.t.Cleanup(srv.Close)
	f.url = srv.URL
}

// changed tells the listener of a change, as the server's caches do.
func (f *fixture) changed(obj any) { f.server.EventHandler().OnUpdate(obj, obj) }

// dial is a client of the listener with the pair and the server name.
func (f *fixture) dial(pair tls.Certificate, serverName string) *http.Client {
	roots := x509.NewCertPool()
	roots.AddCert(f.ca.Cert)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{pair}, RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS13}}}
}

// post posts body as JSON to path with the pair, and returns the status and the body.
func (f *fixture) post(pair tls.Certificate, path string, body any) (int, string) {
	f.t.Helper()
	b, err := json.Marshal(body)
	require.NoError(f.t, err)
	resp, err := f.dial(pair, f.serverName).Post(f.url+path, "application/json", strings.NewReader(string(b)))
	require.NoError(f.t, err)
	defer resp.Body.Close()
	var out strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&out)
	return resp.StatusCode, out.String()
}

// events are the Events recorded so far.
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func corev1LocalRef(name string) corev1.LocalObjectReference {
	return corev1.LocalObjectReference{Name: name}
}

func ptrLocalRef(name string) *corev1.LocalObjectReference {
	return &corev1.LocalObjectReference{Name: name}
}
