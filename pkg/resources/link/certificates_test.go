package link

import (
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// certView is what the tables check of a Certificate.
type certView struct {
	name, issuer, commonName string
	isCA                     bool
	dnsNames, uris           []string
	usages                   []cmv1.KeyUsage
	labels                   map[string]string
	rotation                 cmv1.PrivateKeyRotationPolicy
}

func viewOf(c *cmapply.CertificateApplyConfiguration) certView {
	s := c.Spec
	return certView{name: *c.Name, issuer: *s.IssuerRef.Name, commonName: *s.CommonName, isCA: s.IsCA != nil && *s.IsCA,
		dnsNames: s.DNSNames, uris: s.URIs, usages: s.Usages, labels: c.Labels, rotation: *s.PrivateKey.RotationPolicy}
}

func TestRootShardPKI(t *testing.T) {
	link := func(slot int32) operatorv1alpha1.CARotationState {
		return operatorv1alpha1.CARotationState{Authority: Authority, Phase: operatorv1alpha1.CARotationPreparing, Slot: slot}
	}
	caLabels := pki.Labels("rootshard", "root", "link-ca")
	serverLabels := pki.Labels("rootshard", "root", "link-server")
	server := certView{name: "root-link-server", issuer: "root-link-ca", commonName: "root-link-server",
		dnsNames: []string{"root.team-a.link.kcp-setups.local"}, usages: pki.ServerAuth.KeyUsages(), labels: serverLabels, rotation: cmv1.RotationPolicyAlways}
	ca := func(name string) certView {
		return certView{name: name, issuer: "root-ca", commonName: name, isCA: true, usages: pki.CAKeyUsages, labels: caLabels, rotation: cmv1.RotationPolicyNever}
	}
	for _, tc := range []struct {
		name         string
		rotations    []operatorv1alpha1.CARotationState
		want         []certView
		issuerSecret string
	}{
		{"never rotated", nil, []certView{ca("root-link-ca"), server}, "root-link-ca"},
		{"Start: the new slot beside the old, the Issuer on the old", []operatorv1alpha1.CARotationState{link(1)},
			[]certView{ca("root-link-ca"), ca("root-link-ca-next"), server}, "root-link-ca"},
		{"the leaves switched", []operatorv1alpha1.CARotationState{func() operatorv1alpha1.CARotationState { s := link(1); s.LeavesSwitched = true; return s }()},
			[]certView{ca("root-link-ca"), ca("root-link-ca-next"), server}, "root-link-ca-next"},
		{"Completed: the new slot alone", []operatorv1alpha1.CARotationState{{Authority: Authority, Phase: operatorv1alpha1.CARotationCompleted, Slot: 1, LeavesSwitched: true}},
			[]certView{ca("root-link-ca-next"), server}, "root-link-ca-next"},
		{"another CA's rotation leaves it alone", []operatorv1alpha1.CARotationState{{Authority: "server", Phase: operatorv1alpha1.CARotationPreparing, Slot: 1}},
			[]certView{ca("root-link-ca"), server}, "root-link-ca"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := testRootShard()
			rs.Status.Rotations = tc.rotations
			objs := RootShardPKI(rs)
			var got []certView
			for _, c := range objs.Certificates {
				got = append(got, viewOf(c))
				assert.Equal(t, c.Labels, c.Spec.SecretTemplate.Labels, "%s: its Secret carries its labels", *c.Name)
			}
			assert.Equal(t, tc.want, got)
			require.Len(t, objs.Issuers, 1)
			assert.Equal(t, "root-link-ca", *objs.Issuers[0].Name, "the Issuer keeps the CA's name")
			assert.Equal(t, tc.issuerSecret, *objs.Issuers[0].Spec.CA.SecretName)
			assert.Equal(t, caLabels, objs.Issuers[0].Labels)
			assert.False(t, objs.Bootstrap)
		})
	}
}

// The link CA follows the RootShard's spec as its other intermediate CAs do: its template
// (link-ca), and its root CA whichever source it has.
func TestLinkCAIsAnIntermediateCA(t *testing.T) {
	rs := testRootShard()
	rs.Spec.CertificateTemplates = operatorv1alpha1.CertificateTemplateMap{
		"link-ca": {Spec: &operatorv1alpha1.CertificateSpecTemplate{PrivateKey: &operatorv1alpha1.CertificatePrivateKeyTemplate{Algorithm: "RSA", KeySize: 4096}}},
		"server":  {Spec: &operatorv1alpha1.CertificateSpecTemplate{DNSNames: []string{"kcp.internal.example.com"}}},
	}
	rs.Spec.Certificates = &operatorv1alpha1.Certificates{IssuerRef: &operatorv1alpha1.ObjectReference{Name: "corp", Kind: "ClusterIssuer", Group: "cert-manager.io"}}
	objs := RootShardPKI(rs)
	ca, server := objs.Certificates[0].Spec, objs.Certificates[1].Spec
	assert.Equal(t, cmv1.RSAKeyAlgorithm, *ca.PrivateKey.Algorithm)
	assert.Equal(t, 4096, *ca.PrivateKey.Size)
	assert.Equal(t, "root-ca", *ca.IssuerRef.Name, "signed by the root CA's Issuer, whatever signs the root CA")
	assert.Equal(t, pki.CADuration, *ca.Duration)
	assert.Equal(t, []string{"root.team-a.link.kcp-setups.local"}, server.DNSNames, "the server template is the root shard's, not the listener's")
	assert.Equal(t, cmv1.ECDSAKeyAlgorithm, *server.PrivateKey.Algorithm)

	built, _ := rootshard.IntermediateCA(rs, pki.ServerCA)
	linkCA, _ := rootshard.IntermediateCA(rs, pki.LinkCA)
	assert.Equal(t, *built[0].Spec.IssuerRef, *linkCA[0].Spec.IssuerRef, "the same parent as the server CA")
}

// A RootShard without a Link has no link CA: BuildPKI never builds it, and the RootShard's
// rotations, references and bundles iterate pki.IntermediateCAs, which does not hold it.
func TestRootShardWithoutLinkHasNoLinkCA(t *testing.T) {
	assert.NotContains(t, pki.IntermediateCAs, pki.LinkCA)
	assert.NotContains(t, pki.RootShardAuthorities(), Authority)
	for _, c := range rootshard.BuildPKI(testRootShard()).Certificates {
		assert.NotContains(t, *c.Name, "link", "BuildPKI builds %s", *c.Name)
	}
}

func TestClient(t *testing.T) {
	d := testDeclaration()
	got := Client(d)
	assert.Equal(t, certView{name: "eu-1-link-client", issuer: "root-link-ca", commonName: "eu-1.links.example.com",
		dnsNames: []string{"eu-1.links.example.com"}, uris: []string{"kcp-setups:link:team-a/eu-1/6d1f0c2e-uid"},
		usages: []cmv1.KeyUsage{cmv1.UsageDigitalSignature, cmv1.UsageKeyEncipherment, cmv1.UsageClientAuth},
		labels: pki.Labels("link", "eu-1", "link-client"), rotation: cmv1.RotationPolicyAlways}, viewOf(got))
	assert.Equal(t, "team-a", *got.Namespace)
	assert.Equal(t, "eu-1-link-client", *got.Spec.SecretName)
	assert.Equal(t, "Issuer", *got.Spec.IssuerRef.Kind)
	assert.Equal(t, pki.LeafDuration, *got.Spec.Duration, "a leaf's lifetime")
	assert.Equal(t, pki.LeafRenewBefore, *got.Spec.RenewBefore)
	assert.Nil(t, got.Spec.IsCA)
	assert.Nil(t, got.Spec.Subject, "no organization: the link's identity is no kcp user")
	assert.Equal(t, got.Labels, got.Spec.SecretTemplate.Labels)

	// Its RootShard's templates do not reach it, nor the listener's certificate: another
	// issuer or more names would break the pin.
	d.RootShard.Spec.CertificateTemplates = operatorv1alpha1.CertificateTemplateMap{
		ClientRole: {Spec: &operatorv1alpha1.CertificateSpecTemplate{DNSNames: []string{"evil.example.com"}, IssuerRef: &operatorv1alpha1.ObjectReference{Name: "x", Kind: "Issuer"}}},
		ServerRole: {Spec: &operatorv1alpha1.CertificateSpecTemplate{DNSNames: []string{"evil.example.com"}}},
		"client":   {Spec: &operatorv1alpha1.CertificateSpecTemplate{DNSNames: []string{"evil.example.com"}}},
	}
	assert.Equal(t, viewOf(got), viewOf(Client(d)))
	assert.Equal(t, []string{ServerName(d.RootShard)}, RootShardPKI(d.RootShard).Certificates[1].Spec.DNSNames)
}

// TestGolden shows the link PKI of a RootShard and a Link as the controller would apply it.
func TestGolden(t *testing.T) {
	d := testDeclaration()
	objs := RootShardPKI(d.RootShard)
	bootstrap, err := Bootstrap(d, reference.KeyPair{Cert: certificates.Bundle(pemOf("eu-1-link-client"), pemOf("root-link-ca")), Key: []byte("-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n")},
		pemOf("root-link-ca"))
	require.NoError(t, err)
	golden.Assert(t, "link", objs.Issuers[0], objs.Certificates[0], objs.Certificates[1], Client(d), golden.RedactedSecret(bootstrap))
}
