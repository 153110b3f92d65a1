// Package linktest makes what a remote cluster holds of a link, for tests of its consumers:
// a bootstrap Secret as the home's Link controller writes it (a link CA and a client
// certificate with real keys), and the bundles Secret the remote's link client writes from
// the stream (the keyless data of well-formed reference Secrets).
package linktest

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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
	"github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/reference/referencetest"
)

// Declaration is the Link of the home cluster the bootstrap Secrets of this package are of.
func Declaration() link.Declaration {
	return link.Declaration{Namespace: "kcp", Name: "eu-1", UID: "eu-1-uid", Identity: "eu-1.links.example.com",
		RootShard: referencetest.RootShard(), ListenerURL: "https://links.example.com:8443"}
}

// Bootstrap is the bootstrap Secret name of Declaration() as carried into namespace of the
// remote cluster, with the UID uid: type, data and the reference label, as link.Bootstrap
// builds it, its client certificate valid now.
func Bootstrap(t testing.TB, namespace, name string, uid types.UID) *corev1.Secret {
	t.Helper()
	caPEM, caKey := credentialstest.NewCA(t, "root-link-ca")
	ca, err := credentials.ParseCA(caPEM, caKey)
	require.NoError(t, err)
	d := Declaration()
	uri, err := url.Parse(link.IdentityURI(d))
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: d.Identity},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		DNSNames: []string{d.Identity}, URIs: []*url.URL{uri}, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	client := reference.KeyPair{
		Cert: append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), caPEM...),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
	built, err := link.Bootstrap(d, client, caPEM)
	require.NoError(t, err)
	s := referencetest.Copy(built, namespace)
	s.Name, s.UID = name, uid
	return s
}

// Bundles is the bundles Secret of bootstrap as the remote's link client writes it from a
// stream that sent the keyless data of the reference Secrets of refs, made from cas.
func Bundles(t testing.TB, bootstrap *corev1.Secret, cas reference.RootShardCAs, refs ...reference.Reference) *corev1.Secret {
	t.Helper()
	copies := referencetest.Copies(t, cas, bootstrap.Namespace)
	data := map[reference.Reference]map[string][]byte{}
	for _, r := range refs {
		data[r] = link.KeepOnlyKeyless(copies[r].Data)
	}
	built, err := link.Bundles(bootstrap, data, bootstrap.Data[link.CACertKey], "1")
	require.NoError(t, err)
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: *built.Name, Namespace: *built.Namespace, ResourceVersion: "1",
			Labels: built.Labels, Annotations: built.Annotations},
		Type: *built.Type,
		Data: built.Data,
	}
	for _, o := range built.OwnerReferences {
		s.OwnerReferences = append(s.OwnerReferences, metav1.OwnerReference{APIVersion: *o.APIVersion, Kind: *o.Kind, Name: *o.Name, UID: *o.UID})
	}
	return s
}
