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

// ReissueStaleLeaves deletes the Secret of a Ready leaf its CA's Secret did not sign, marks
// Issuing the Certificate of such a CA, whose key must stay, and touches nothing else: not
// what its CA signed, not what cert-manager is issuing.
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
		// A CA whose issuer rotated is issued again with its key: the bundles carry the CA
		// itself, and what it signed must keep verifying.
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
		{name: "the CA rotated", ca: renewedPEM, ready: "True", deleted: []string{"delete secrets/", "update certificates/status"}},
		{name: "the CA rotated, the leaf is being issued", ca: renewedPEM, ready: "False"},
		// A Shard's leaves: the Issuer is the RootShard's, known from the cache only.
		{name: "the CA rotated, its Issuer is another object's", ca: renewedPEM, ready: "True", cached: true, deleted: []string{"delete secrets/", "update certificates/status"}},
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
				c := &cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
					Status: cmv1.CertificateStatus{Conditions: []cmv1.CertificateCondition{{Type: cmv1.CertificateConditionReady, Status: cmmeta.ConditionStatus(tc.ready)}}}}
				require.NoError(t, h.Caches["certificates"].Add(c))
				_, err := h.CM.CertmanagerV1().Certificates(ns).Create(t.Context(), c, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			desired := issuers
			if tc.cached {
				desired = nil
				require.NoError(t, h.Caches["issuers"].Add(&cmv1.Issuer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "root-server-ca"},
					Spec: cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{CA: &cmv1.CAIssuer{SecretName: "root-server-ca"}}}}))
			}
			h.Reset()
			n, err := h.ReissueStaleLeaves(t.Context(), desired, certs, nil)
			require.NoError(t, err)
			assert.Len(t, tc.deleted, n)
			assert.ElementsMatch(t, tc.deleted, h.Writes())
			// The CA keeps its Secret, hence its key: cert-manager issues it again from the
			// Issuing condition, as cmctl renew has it do.
			_, err = h.Kube.CoreV1().Secrets(ns).Get(t.Context(), "root-client-ca", metav1.GetOptions{})
			require.NoError(t, err, "a CA's Secret is never deleted")
			ca, err := h.CM.CertmanagerV1().Certificates(ns).Get(t.Context(), "root-client-ca", metav1.GetOptions{})
			require.NoError(t, err)
			issuing := false
			for _, c := range ca.Status.Conditions {
				issuing = issuing || (c.Type == cmv1.CertificateConditionIssuing && c.Status == cmmeta.ConditionTrue)
			}
			assert.Equal(t, len(tc.deleted) > 0, issuing, "the CA is Issuing once its issuer's CA changed")
			require.NoError(t, h.Caches["certificates"].Update(ca))
			// Until the cache sees the deletion, the next reconcile tries again, and finds the
			// Secret gone: nothing more is deleted; the CA's Certificate is Issuing already.
			n, err = h.ReissueStaleLeaves(t.Context(), desired, certs, nil)
			require.NoError(t, err)
			assert.Zero(t, n)
		})
	}
}

// A linked consumer's certificate is issued by an external issuer (the LinkIssuer), which
// signs over the link from the CA its home names: ReissueStaleLeaves checks it against that
// CA (signers), and leaves it alone when it has none.
func TestReissueStaleLeavesOfAnExternalIssuer(t *testing.T) {
	const ns = "team"
	caPEM, ca, caKey := testCA(t, "root-server-ca")
	renewedPEM, _, _ := testCA(t, "root-server-ca-next")
	certs := []*cmapply.CertificateApplyConfiguration{cmapply.Certificate("shard-1-server", ns).WithSpec(cmapply.CertificateSpec().
		WithSecretName("shard-1-server").WithIssuerRef(cmmetaapply.IssuerReference().WithName("shard-1-shard-root-server-ca").
		WithKind("LinkIssuer").WithGroup("operator.kcp.io")))}
	for _, tc := range []struct {
		name    string
		signers map[string][]byte
		deleted []string
	}{
		{name: "the home signs from the CA that signed it", signers: map[string][]byte{"shard-1-shard-root-server-ca": caPEM}},
		{name: "the home signs from another CA", signers: map[string][]byte{"shard-1-shard-root-server-ca": renewedPEM}, deleted: []string{"delete secrets/"}},
		{name: "no signer known", signers: map[string][]byte{"another-issuer": renewedPEM}},
		{name: "a signer that is no certificate", signers: map[string][]byte{"shard-1-shard-root-server-ca": []byte("not PEM")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := controllertest.NewHost(t)
			leaf := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shard-1-server", ResourceVersion: "1", UID: "uid-leaf"},
				Data: map[string][]byte{"tls.crt": testLeaf(t, ca, caKey)}}
			require.NoError(t, h.Caches["secrets"].Add(leaf))
			_, err := h.Kube.CoreV1().Secrets(ns).Create(t.Context(), leaf, metav1.CreateOptions{})
			require.NoError(t, err)
			require.NoError(t, h.Caches["certificates"].Add(&cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shard-1-server"},
				Status: cmv1.CertificateStatus{Conditions: []cmv1.CertificateCondition{{Type: cmv1.CertificateConditionReady, Status: cmmeta.ConditionTrue}}}}))
			h.Reset()
			n, err := h.ReissueStaleLeaves(t.Context(), nil, certs, tc.signers)
			require.NoError(t, err)
			assert.Len(t, tc.deleted, n)
			assert.ElementsMatch(t, tc.deleted, h.Writes())
		})
	}
}

func cmmetaIssuer(name string) *cmmetaapply.IssuerReferenceApplyConfiguration {
	return cmmetaapply.IssuerReference().WithName(name).WithKind("Issuer").WithGroup("cert-manager.io")
}

// issueCA signs a CA certificate of subject name and key under parent (self-signed without
// one), as cert-manager issues an intermediate again with its key (rotationPolicy Never).
func issueCA(t *testing.T, name string, serial int64, key *ecdsa.PrivateKey, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) *x509.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	require.NoError(t, err)
	c, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return c
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return k
}

func pemOf(c ...*x509.Certificate) []byte {
	var out []byte
	for _, x := range c {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: x.Raw})...)
	}
	return out
}

// The root CA's rotation (docs/rotation.md) rests on this: an intermediate issued again under
// the new root, with its key and subject, is the anchor of everything the old one signed. A
// leaf it signed before verifies against a bundle of the re-issued intermediate alone (the
// merged bundles), and chains up to the new root through it; the leaf is not stale (not
// issued again), the old intermediate is, under the new root.
func TestAReissuedIntermediateKeepsWhatItSigned(t *testing.T) {
	oldRootKey, newRootKey, interKey := newKey(t), newKey(t), newKey(t)
	oldRoot := issueCA(t, "root-ca", 1, oldRootKey, nil, nil)
	newRoot := issueCA(t, "root-ca-next", 2, newRootKey, nil, nil)
	oldInter := issueCA(t, "root-server-ca", 3, interKey, oldRoot, oldRootKey)
	newInter := issueCA(t, "root-server-ca", 4, interKey, newRoot, newRootKey)
	require.Equal(t, oldInter.SubjectKeyId, newInter.SubjectKeyId, "same key, same key identifier")

	leafPEM := testLeaf(t, oldInter, interKey)
	// cert-manager's tls.crt of the leaf: the leaf, then the old chain.
	chain := append(append([]byte{}, leafPEM...), pemOf(oldInter, oldRoot)...)
	leaf := firstCert(t, leafPEM)

	anchors := x509.NewCertPool()
	anchors.AddCert(newInter)
	_, err := leaf.Verify(x509.VerifyOptions{Roots: anchors})
	require.NoError(t, err, "the re-issued intermediate alone verifies the leaf the old one signed")

	roots := x509.NewCertPool()
	roots.AddCert(newRoot)
	inters := x509.NewCertPool()
	inters.AddCert(newInter)
	chains, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inters})
	require.NoError(t, err, "the leaf chains up to the new root through the re-issued intermediate")
	assert.Equal(t, newRoot.Raw, chains[0][len(chains[0])-1].Raw)

	onlyNewRoot := x509.NewCertPool()
	onlyNewRoot.AddCert(newRoot)
	_, err = oldInter.Verify(x509.VerifyOptions{Roots: onlyNewRoot})
	assert.Error(t, err, "the old intermediate does not chain to the new root: it must be issued again")

	assert.False(t, hostcluster.NotSignedBy(chain, pemOf(newInter)), "the leaf is not stale: its key signed it")
	assert.True(t, hostcluster.NotSignedBy(pemOf(oldInter, oldRoot), pemOf(newRoot)), "the old intermediate is stale under the new root")
	assert.False(t, hostcluster.NotSignedBy(pemOf(newInter, newRoot), pemOf(newRoot)), "the re-issued one is not")
}

func firstCert(t *testing.T, p []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(p)
	require.NotNil(t, block)
	c, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return c
}
