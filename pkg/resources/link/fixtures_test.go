package link

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

func testRootShard() *operatorv1alpha1.RootShard {
	return &operatorv1alpha1.RootShard{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{ClusterDomain: "cluster.local",
				Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}},
			External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 6443},
		},
	}
}

func testDeclaration() Declaration {
	return Declaration{Namespace: "team-a", Name: "eu-1", UID: "6d1f0c2e-uid", Identity: "eu-1.links.example.com",
		RootShard: testRootShard(), ListenerURL: "https://links.example.com:8443"}
}

// testCA is a CA with a real key: the link CA of a test, or another.
type testCA struct {
	PEM []byte
	*credentials.CA
}

func newCA(t *testing.T, cn string) testCA {
	cert, key := credentialstest.NewCA(t, cn)
	ca, err := credentials.ParseCA(cert, key)
	require.NoError(t, err)
	return testCA{PEM: cert, CA: ca}
}

// leafOpts shape a leaf the test issues; the zero value is a link client certificate of
// testDeclaration(), valid now.
type leafOpts struct {
	usages    []x509.ExtKeyUsage
	dnsNames  []string
	uris      []string
	isCA      bool
	notBefore time.Time
	notAfter  time.Time
}

// issue signs a leaf with a fresh ECDSA key, as cert-manager's CA issuer writes it: tls.crt
// the leaf then the CA, tls.key its PKCS#8 key.
func (ca testCA) issue(t *testing.T, o leafOpts) reference.KeyPair {
	t.Helper()
	d := testDeclaration()
	if o.usages == nil {
		o.usages = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	if o.dnsNames == nil {
		o.dnsNames = []string{d.Identity}
	}
	if o.uris == nil {
		o.uris = []string{IdentityURI(d)}
	}
	if o.notBefore.IsZero() {
		o.notBefore, o.notAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	}
	var uris []*url.URL
	for _, u := range o.uris {
		parsed, err := url.Parse(u)
		require.NoError(t, err)
		uris = append(uris, parsed)
	}
	usage := x509.KeyUsageDigitalSignature
	if o.isCA {
		usage |= x509.KeyUsageCertSign
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: o.dnsNames[0]},
		NotBefore: o.notBefore, NotAfter: o.notAfter, KeyUsage: usage, ExtKeyUsage: o.usages,
		DNSNames: o.dnsNames, URIs: uris, IsCA: o.isCA, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return reference.KeyPair{Cert: append(cert, ca.PEM...), Key: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})}
}

// pemOf is a PEM block standing in for the certificate name: the builders only copy it, and
// the golden file shows its fingerprint.
func pemOf(name string) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte(name)})
}
