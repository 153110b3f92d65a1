package hostcluster_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	cmmetaapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/meta/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
)

// testCA is a CA certificate (PEM) and its key, under a name that a renewed CA keeps.
func testCA(t *testing.T, name string) ([]byte, *x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	certPEM, keyPEM := credentialstest.NewCA(t, name)
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	block, _ = pem.Decode(keyPEM)
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	require.NoError(t, err)
	return certPEM, cert, key.(*ecdsa.PrivateKey)
}

func testLeaf(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "root"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// A leaf is stale once its CA's Secret holds another CA of the same name (rotated, or
// issued twice), and only then; what cannot be read is never called stale.
func TestNotSignedBy(t *testing.T) {
	caPEM, ca, caKey := testCA(t, "root-server-ca")
	renewedPEM, _, _ := testCA(t, "root-server-ca")
	leaf := testLeaf(t, ca, caKey)
	// cert-manager's tls.crt holds the leaf, then its chain.
	chain := append(append([]byte{}, leaf...), caPEM...)

	assert.False(t, hostcluster.NotSignedBy(chain, caPEM), "signed by the CA")
	assert.False(t, hostcluster.NotSignedBy(chain, append(append([]byte{}, caPEM...), renewedPEM...)), "the first certificate of the CA's Secret is the CA")
	assert.True(t, hostcluster.NotSignedBy(chain, renewedPEM), "the CA was rotated since")
	assert.True(t, hostcluster.NotSignedBy(chain, append(append([]byte{}, renewedPEM...), caPEM...)), "only the current CA counts")
	// A CA certificate that lacks its basic constraints still signed what it signed: such a
	// leaf must not be issued again and again.
	bare := *ca
	bare.BasicConstraintsValid, bare.IsCA = false, false
	bareDER, err := x509.CreateCertificate(rand.Reader, &bare, &bare, caKey.Public(), caKey)
	require.NoError(t, err)
	bareCA, err := x509.ParseCertificate(bareDER)
	require.NoError(t, err)
	assert.False(t, hostcluster.NotSignedBy(testLeaf(t, bareCA, caKey), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: bareDER})))
	assert.False(t, hostcluster.NotSignedBy(nil, renewedPEM), "no leaf yet")
	assert.False(t, hostcluster.NotSignedBy(chain, nil), "no CA yet")
	assert.False(t, hostcluster.NotSignedBy([]byte("not PEM"), renewedPEM))
	assert.False(t, hostcluster.NotSignedBy(chain, []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")))
}

// ReissueStaleLeaves deletes the Secret of a Ready leaf its CA's Secret did not sign, and
// nothing else: not a leaf its CA signed, not one cert-manager is issuing, not a CA.
func TestReissueStaleLeaves(t *testing.T) {
	const ns = "team"
	caPEM, ca, caKey := testCA(t, "root-server-ca")
	renewedPEM, _, _ := testCA(t, "root-server-ca")
	leafPEM := testLeaf(t, ca, caKey)
	issuers := []*cmapply.IssuerApplyConfiguration{cmapply.Issuer("root-server-ca", ns).
		WithSpec(cmapply.IssuerSpec().WithCA(cmapply.CAIssuer().WithSecretName("root-server-ca")))}
	certs := []*cmapply.CertificateApplyConfiguration{
		cmapply.Certificate("root-server", ns).WithSpec(cmapply.CertificateSpec().WithSecretName("root-server").
			WithIssuerRef(cmmetaIssuer("root-server-ca"))),
		// A CA whose issuer rotated stays: the bundles carry the CA itself.
		cmapply.Certificate("root-client-ca", ns).WithSpec(cmapply.CertificateSpec().WithSecretName("root-client-ca").WithIsCA(true).
			WithIssuerRef(cmmetaIssuer("root-server-ca"))),
	}
	for _, tc := range []struct {
		name    string
		ca      []byte
		ready   corev1.ConditionStatus
		cached  bool
		deleted []string
	}{
		{name: "signed by the current CA", ca: caPEM, ready: "True"},
		{name: "the CA rotated", ca: renewedPEM, ready: "True", deleted: []string{"delete secrets/"}},
		{name: "the CA rotated, the leaf is being issued", ca: renewedPEM, ready: "False"},
		// A Shard's leaves: the Issuer is the RootShard's, known from the cache only.
		{name: "the CA rotated, its Issuer is another object's", ca: renewedPEM, ready: "True", cached: true, deleted: []string{"delete secrets/"}},
		{name: "signed by the current CA, its Issuer is another object's", ca: caPEM, ready: "True", cached: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := controllertest.NewHost(t)
			secret := func(name, rv string, crt []byte) *corev1.Secret {
				return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv, UID: types.UID("uid-" + name)},
					Data: map[string][]byte{"tls.crt": crt}}
			}
			for _, s := range []*corev1.Secret{secret("root-server-ca", "2", tc.ca), secret("root-server", "1", leafPEM), secret("root-client-ca", "1", leafPEM)} {
				require.NoError(t, h.Caches["secrets"].Add(s))
				_, err := h.Kube.CoreV1().Secrets(ns).Create(t.Context(), s, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			for _, name := range []string{"root-server", "root-client-ca"} {
				require.NoError(t, h.Caches["certificates"].Add(&cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
					Status: cmv1.CertificateStatus{Conditions: []cmv1.CertificateCondition{{Type: cmv1.CertificateConditionReady, Status: cmmeta.ConditionStatus(tc.ready)}}}}))
			}
			desired := issuers
			if tc.cached {
				desired = nil
				require.NoError(t, h.Caches["issuers"].Add(&cmv1.Issuer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "root-server-ca"},
					Spec: cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{CA: &cmv1.CAIssuer{SecretName: "root-server-ca"}}}}))
			}
			h.Reset()
			n, err := h.ReissueStaleLeaves(t.Context(), desired, certs)
			require.NoError(t, err)
			assert.Len(t, tc.deleted, n)
			assert.ElementsMatch(t, tc.deleted, h.Writes())
			// Until the cache sees the deletion, the next reconcile tries again, and finds the
			// Secret gone: nothing more is deleted.
			n, err = h.ReissueStaleLeaves(t.Context(), desired, certs)
			require.NoError(t, err)
			assert.Zero(t, n)
		})
	}
}

func cmmetaIssuer(name string) *cmmetaapply.IssuerReferenceApplyConfiguration {
	return cmmetaapply.IssuerReference().WithName(name).WithKind("Issuer").WithGroup("cert-manager.io")
}
