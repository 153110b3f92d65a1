package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	cmclientset "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned"
	cminformers "github.com/cert-manager/cert-manager/pkg/client/informers/externalversions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/link/remote"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// testCA is a CA of the test, with its PEM certificate.
type testCA struct {
	*credentials.CA
	pem []byte
}

func newTestCA(t *testing.T, cn string) testCA {
	cert, key := credentialstest.NewCA(t, cn)
	ca, err := credentials.ParseCA(cert, key)
	require.NoError(t, err)
	return testCA{CA: ca, pem: cert}
}

// sign signs tmpl for pub: the PEM leaf, then the CA.
func (ca testCA) sign(t *testing.T, tmpl *x509.Certificate, pub any) []byte {
	tmpl.SerialNumber = big.NewInt(time.Now().UnixNano())
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, pub, ca.Key)
	require.NoError(t, err)
	return append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), ca.pem...)
}

// TestLinkIssuerSignsOverTheLink runs the remote server's side of a link (pkg/link/remote)
// against the host cluster's kube-apiserver and cert-manager, and a home that is the
// listener's real middleware in this process, signing with a CA of the test after the real
// CSR policy: the bundles the stream sends land in the bundles Secret; a Certificate that a
// linked Shard's controller would write, naming the LinkIssuer, is issued by cert-manager
// with the chain the home signed, its key never leaving the cluster; one whose owner is not
// the linked Shard (another UID) is not signed; the client certificate, past two thirds of
// its life, is renewed over the link into the bootstrap Secret.
func TestLinkIssuerSignsOverTheLink(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "link-issuer")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	// The home: its link CA, its listener's serving certificate, the server CA it signs from.
	linkCA, serverCA := newTestCA(t, "root-link-ca"), newTestCA(t, "root-server-ca")
	const serverName = "root.home" + linkpki.ServerNameSuffix
	decl := link.Declaration{Namespace: "home", Name: "eu-1", UID: "uid-eu-1", RootShard: "root", Identity: "eu-1.links.example.com",
		Consumers: []link.ConsumerKind{link.Shard}}
	servingKey, servingPEM := newKeyPEM(t)
	serving, err := tls.X509KeyPair(linkCA.sign(t, &x509.Certificate{Subject: pkix.Name{CommonName: serverName}, DNSNames: []string{serverName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, servingKey.Public()), servingPEM)
	require.NoError(t, err)
	listener := &link.Listener{
		Declarations: func() []link.Declaration { return []link.Declaration{decl} },
		Trust: func() link.Trust {
			return link.Trust{decl.Key(): {LinkCAs: []*x509.Certificate{linkCA.Cert}, ServerName: serverName}}
		},
		Limiter: link.NewLimiter(link.DefaultLimits),
	}
	home := httptest.NewUnstartedServer(listener.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, _ := link.AuthorizedFrom(r.Context())
		switch a.Request.Operation {
		case link.WatchBundles:
			_ = json.NewEncoder(w).Encode(link.StreamMessage{Type: link.BundlesMessage, Bundles: &link.Bundles{Revision: "1",
				References: map[link.ConsumerKind]map[string][]byte{link.Shard: {reference.CertKey(pki.ServerCA): serverCA.pem}},
				LinkCA:     linkCA.pem}})
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case link.Sign:
			var req link.SignRequest
			require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
			block, _ := pem.Decode(req.Request)
			csr, err := x509.ParseCertificateRequest(block.Bytes)
			require.NoError(t, err)
			if _, err := link.Match(csr, a.Request.Kind, a.Request.Role, a.Declaration); err != nil {
				t.Logf("the home refuses the CSR: %v", err)
				w.WriteHeader(http.StatusForbidden)
				return
			}
			leaf := serverCA.sign(t, &x509.Certificate{Subject: csr.Subject, DNSNames: csr.DNSNames, NotBefore: time.Now().Add(-time.Minute),
				NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
				ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, csr.PublicKey)
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(link.SignResponse{Certificate: leaf, CA: serverCA.pem})
		case link.Renew:
			var req link.SignRequest
			require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
			block, _ := pem.Decode(req.Request)
			csr, err := x509.ParseCertificateRequest(block.Bytes)
			require.NoError(t, err)
			if err := link.CheckRenewal(csr, a.Declaration); err != nil {
				t.Logf("the home refuses the renewal: %v", err)
				w.WriteHeader(http.StatusForbidden)
				return
			}
			renewed := linkCA.sign(t, &x509.Certificate{Subject: csr.Subject, DNSNames: csr.DNSNames, URIs: csr.URIs,
				NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
				ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, csr.PublicKey)
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(link.SignResponse{Certificate: renewed, CA: linkCA.pem})
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})))
	home.TLS = link.TLSConfig(func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &serving, nil })
	home.EnableHTTP2 = true
	home.StartTLS()
	t.Cleanup(home.Close)

	// The bootstrap Secret, carried to the remote cluster, its client certificate past two
	// thirds of its life.
	clientKey, clientKeyPEM := newKeyPEM(t)
	uri, err := url.Parse(decl.URI())
	require.NoError(t, err)
	clientCert := linkCA.sign(t, &x509.Certificate{Subject: pkix.Name{CommonName: decl.Identity}, DNSNames: []string{decl.Identity},
		URIs: []*url.URL{uri}, NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: time.Now().Add(30 * time.Minute),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, clientKey.Public())
	kube, err := kubernetes.NewForConfig(stack.AdminConfig)
	require.NoError(t, err)
	bootstrap, err := kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: linkpki.BootstrapName(decl.Name)},
		Type: linkpki.BootstrapType, Data: map[string][]byte{linkpki.ListenerURLKey: []byte(home.URL), linkpki.ServerNameKey: []byte(serverName),
			linkpki.CACertKey: linkCA.pem, linkpki.ClientCertKey: clientCert, linkpki.ClientKeyKey: clientKeyPEM}}, metav1.CreateOptions{})
	require.NoError(t, err)

	// The remote server, the Shard eu-shard linked.
	const shard, shardUID = "eu-shard", "uid-eu-shard"
	links, cm := runRemote(t, ctx, ns, bootstrap.Name, shard, shardUID)

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		s, err := kube.CoreV1().Secrets(ns).Get(ctx, linkpki.BundlesName(bootstrap.Name), metav1.GetOptions{})
		if !assert.NoError(c, err) {
			return
		}
		assert.Equal(c, "1", s.Annotations[linkpki.RevisionAnnotation])
		assert.Equal(c, serverCA.pem, s.Data[linkpki.BundlesKey(reference.ShardJoin, reference.CertKey(pki.ServerCA))])
		assert.Equal(c, linkCA.pem, s.Data[linkpki.BundlesLinkCAKey])
	}, time.Minute, 200*time.Millisecond, "the bundles Secret holds what the stream sent")
	state, _ := links.State(ns, bootstrap.Name)
	assert.True(t, state.Connected, "%+v", state)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		s, err := kube.CoreV1().Secrets(ns).Get(ctx, bootstrap.Name, metav1.GetOptions{})
		if !assert.NoError(c, err) {
			return
		}
		b, err := linkpki.ResolveBootstrap(s, time.Now())
		if assert.NoError(c, err) {
			assert.True(c, b.Client.Cert.NotAfter.After(time.Now().Add(time.Hour)), "the renewed certificate")
		}
		for _, k := range []string{linkpki.ListenerURLKey, linkpki.ServerNameKey, linkpki.CACertKey} {
			assert.Equal(c, bootstrap.Data[k], s.Data[k], "only the pair changes: %s", k)
		}
	}, time.Minute, 200*time.Millisecond, "the client certificate is renewed over the link, into the bootstrap Secret")

	_, err = cm.CertmanagerV1().Certificates(ns).Create(ctx, linkedShardCertificate(ns, "eu-shard-server", shard, shardUID, "localhost"), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cm.CertmanagerV1().Certificates(ns).Create(ctx, linkedShardCertificate(ns, "stranger-server", shard, "uid-of-another", "localhost"), metav1.CreateOptions{})
	require.NoError(t, err)

	var tlsSecret *corev1.Secret
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		s, err := kube.CoreV1().Secrets(ns).Get(ctx, "eu-shard-server", metav1.GetOptions{})
		if assert.NoError(c, err) && assert.NotEmpty(c, s.Data[corev1.TLSCertKey]) {
			tlsSecret = s
		}
	}, 2*time.Minute, 500*time.Millisecond, "cert-manager issues the Certificate through the LinkIssuer")
	block, _ := pem.Decode(tlsSecret.Data[corev1.TLSCertKey])
	require.NotNil(t, block)
	leaf, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	roots := x509.NewCertPool()
	roots.AddCert(serverCA.Cert)
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	require.NoError(t, err, "the chain is the home's")
	assert.Equal(t, shard, leaf.Subject.CommonName)
	_, err = tls.X509KeyPair(tlsSecret.Data[corev1.TLSCertKey], tlsSecret.Data[corev1.TLSPrivateKeyKey])
	require.NoError(t, err, "the key cert-manager made here is the certificate's")
	assert.Equal(t, serverCA.pem, tlsSecret.Data[cmmeta.TLSCAKey], "status.ca is the signing CA")

	requests, err := cm.CertmanagerV1().CertificateRequests(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, cr := range requests.Items {
		if owner := metav1.GetControllerOf(&cr); owner == nil || owner.Name != "eu-shard-server" {
			continue
		}
		assert.Contains(t, readyReasons(&cr), cmv1.CertificateRequestReasonIssued)
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		list, err := cm.CertmanagerV1().CertificateRequests(ns).List(ctx, metav1.ListOptions{})
		require.NoError(c, err)
		found := false
		for _, cr := range list.Items {
			if owner := metav1.GetControllerOf(&cr); owner == nil || owner.Name != "stranger-server" {
				continue
			}
			found = true
			assert.Empty(c, cr.Status.Certificate)
			// cert-manager's approver may approve it first: then it fails instead of being
			// denied; either way it is never sent over the link.
			assert.Subset(c, []string{cmv1.CertificateRequestReasonDenied, cmv1.CertificateRequestReasonFailed}, readyReasons(&cr))
			assert.NotEmpty(c, readyReasons(&cr))
		}
		assert.True(c, found)
	}, time.Minute, 500*time.Millisecond, "the request of a Certificate of another owner is not signed")
	stranger, err := kube.CoreV1().Secrets(ns).Get(ctx, "stranger-server", metav1.GetOptions{})
	if err == nil {
		assert.Empty(t, stranger.Data[corev1.TLSCertKey])
	}
}

// TestLinkedShardSignedByTheHome runs the remote server's side of a link (in this process)
// against the shared stack's server as the home: a Link of a realized RootShard, its bootstrap
// Secret carried to another namespace, which stands in for the remote cluster; the bundles
// Secret there gets the shard-join's keyless data from the home's stream, and a linked Shard's
// serving certificate naming the LinkIssuer is issued by cert-manager there with the chain the
// home's RootShard server CA signed through its own CertificateRequest.
func TestLinkedShardSignedByTheHome(t *testing.T) {
	parallel(t, alone)
	homeNS := namespace(t, "link-home")
	remoteNS := namespace(t, "link-remote")
	givenRootShard(t, homeNS)
	givenLink(t, homeNS, "eu-1", "eu-1.links.example.com")
	carried, err := stack.Kube.CoreV1().Secrets(homeNS).Get(t.Context(), linkpki.BootstrapName("eu-1"), metav1.GetOptions{})
	require.NoError(t, err)
	_, err = stack.Kube.CoreV1().Secrets(remoteNS).Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: carried.Name},
		Type: carried.Type, Data: carried.Data}, metav1.CreateOptions{})
	require.NoError(t, err)

	const shard, shardUID = "eu-shard", "uid-eu-shard"
	links, cm := runRemote(t, t.Context(), remoteNS, carried.Name, shard, shardUID)
	join, err := stack.Kube.CoreV1().Secrets(homeNS).Get(t.Context(), reference.ShardJoin.Name("root"), metav1.GetOptions{})
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		s, err := stack.Kube.CoreV1().Secrets(remoteNS).Get(t.Context(), linkpki.BundlesName(carried.Name), metav1.GetOptions{})
		if !assert.NoError(c, err) {
			return
		}
		assert.Equal(c, linkpki.KeepOnlyKeyless(join.Data), linkpki.ReferenceData(s, reference.ShardJoin), "the shard-join's keyless data")
		assert.Equal(c, carried.Data[linkpki.CACertKey], s.Data[linkpki.BundlesLinkCAKey])
		for k := range s.Data {
			assert.False(c, linkpki.IsPrivateKey(k), "the key %s", k)
		}
	}, 2*time.Minute, 500*time.Millisecond, "the bundles Secret holds what the home's stream sent")
	state, _ := links.State(remoteNS, carried.Name)
	assert.True(t, state.Connected, "%+v", state)

	_, err = cm.CertmanagerV1().Certificates(remoteNS).Create(t.Context(),
		linkedShardCertificate(remoteNS, "eu-shard-server", shard, shardUID, "eu-shard.eu.example.com", "localhost"), metav1.CreateOptions{})
	require.NoError(t, err)
	var issued *corev1.Secret
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		s, err := stack.Kube.CoreV1().Secrets(remoteNS).Get(t.Context(), "eu-shard-server", metav1.GetOptions{})
		if assert.NoError(c, err) && assert.NotEmpty(c, s.Data[corev1.TLSCertKey]) {
			issued = s
		}
	}, 2*time.Minute, 500*time.Millisecond, "cert-manager issues the Certificate through the LinkIssuer and the home")
	leaf := parseFirstCertificate(t, issued.Data[corev1.TLSCertKey])
	serverCA, err := stack.Kube.CoreV1().Secrets(homeNS).Get(t.Context(), "root-server-ca", metav1.GetOptions{})
	require.NoError(t, err)
	roots := x509.NewCertPool()
	roots.AddCert(parseFirstCertificate(t, serverCA.Data[corev1.TLSCertKey]))
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	require.NoError(t, err, "the leaf chains to the home RootShard's server CA")
	assert.ElementsMatch(t, []string{"eu-shard.eu.example.com", "localhost"}, leaf.DNSNames)
	_, err = tls.X509KeyPair(issued.Data[corev1.TLSCertKey], issued.Data[corev1.TLSPrivateKeyKey])
	require.NoError(t, err, "the key cert-manager made in the remote namespace is the certificate's")
}

// runRemote runs the remote server's side of a link in this process until the test ends:
// the links' manager of the bootstrap Secret ns/bootstrap and the LinkIssuer over ns, with the
// Shard ns/shard of uid linked through it.
func runRemote(t *testing.T, ctx context.Context, ns, bootstrap, shard, uid string) (*remote.Manager, cmclientset.Interface) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	kube, err := kubernetes.NewForConfig(stack.AdminConfig)
	require.NoError(t, err)
	links := remote.NewManager(kube)
	links.Set(ctx, []types.NamespacedName{{Namespace: ns, Name: bootstrap}})
	sources := []remote.ConsumerSource{{Kind: link.Shard, Label: "shard", Bootstrap: func(namespace, name string, u types.UID) (string, bool, error) {
		return bootstrap, namespace == ns && name == shard && u == types.UID(uid), nil
	}}}
	cm, err := cmclientset.NewForConfig(stack.AdminConfig)
	require.NoError(t, err)
	factory := cminformers.NewSharedInformerFactoryWithOptions(cm, 0, cminformers.WithNamespace(ns))
	issuer, err := remote.NewIssuer(cm, factory.Certmanager().V1().CertificateRequests(), factory.Certmanager().V1().Certificates().Lister(),
		links.Signer, sources)
	require.NoError(t, err)
	factory.Start(ctx.Done())
	issued := make(chan struct{})
	go func() { defer close(issued); _ = issuer.Run(ctx, 2) }()
	t.Cleanup(func() { cancel(); <-issued; factory.Shutdown(); links.Stop() })
	return links, cm
}

// linkedShardCertificate is what the Shard controller writes for the linked Shard shard of
// uid: its serving certificate name, for dnsNames, from the LinkIssuer of its joined
// RootShard's server CA.
func linkedShardCertificate(ns, name, shard, uid string, dnsNames ...string) *cmv1.Certificate {
	return &cmv1.Certificate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{pki.LabelManagedBy: pki.ManagedBy,
			pki.OwnerLabel("shard"): shard, pki.LabelOwnerUID: uid}},
		Spec: cmv1.CertificateSpec{CommonName: shard, DNSNames: dnsNames, SecretName: name, Usages: pki.ServerAuth.KeyUsages(),
			PrivateKey: &cmv1.CertificatePrivateKey{Algorithm: cmv1.ECDSAKeyAlgorithm, Size: 256},
			IssuerRef: cmmeta.IssuerReference{Group: linkpki.IssuerGroup, Kind: linkpki.IssuerKind,
				Name: pki.CAName(reference.JoinedName("shard", shard), pki.ServerCA)}},
	}
}

// readyReasons are the reasons of the Ready conditions of cr.
func readyReasons(cr *cmv1.CertificateRequest) []string {
	var out []string
	for _, c := range cr.Status.Conditions {
		if c.Type == cmv1.CertificateRequestConditionReady {
			out = append(out, c.Reason)
		}
	}
	return out
}

// newKeyPEM is a new P-256 key and its PEM.
func newKeyPEM(t *testing.T) (*ecdsa.PrivateKey, []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}
