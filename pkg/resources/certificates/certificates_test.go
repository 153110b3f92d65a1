package certificates

import (
	"testing"

	"github.com/stretchr/testify/assert"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// TestCertificateTemplateIssuerRef checks kcp-operator's semantics of a template's issuerRef
// (its doc comment on DNSNames): the issuer is replaced, and the template's names replace
// the generated ones instead of adding to them, unless it gives none.
func TestCertificateTemplateIssuerRef(t *testing.T) {
	acme := &operatorv1alpha1.ObjectReference{Name: "letsencrypt", Kind: "ClusterIssuer", Group: "cert-manager.io"}
	leaf := pki.Leaf{Name: "rs-fp-server", Role: "server", Issuer: "rs-server-ca", CommonName: "fp",
		DNSNames: []string{"fp-front-proxy", "fp-front-proxy.ns"}, Usage: pki.ServerAuth}
	tests := []struct {
		name       string
		spec       *operatorv1alpha1.CertificateSpecTemplate
		wantIssuer []string // name, kind, group
		wantDNS    []string
		wantIPs    []string
	}{
		{name: "no template spec: the PKI's issuer and names",
			wantIssuer: []string{"rs-server-ca", "Issuer", "cert-manager.io"}, wantDNS: leaf.DNSNames},
		{name: "names without issuerRef are added",
			spec:       &operatorv1alpha1.CertificateSpecTemplate{DNSNames: []string{"kcp.example.com"}, IPAddresses: []string{"10.0.0.1"}},
			wantIssuer: []string{"rs-server-ca", "Issuer", "cert-manager.io"},
			wantDNS:    []string{"fp-front-proxy", "fp-front-proxy.ns", "kcp.example.com"}, wantIPs: []string{"10.0.0.1"}},
		{name: "issuerRef with names: the names replace the generated ones",
			spec:       &operatorv1alpha1.CertificateSpecTemplate{IssuerRef: acme, DNSNames: []string{"kcp.example.com"}},
			wantIssuer: []string{"letsencrypt", "ClusterIssuer", "cert-manager.io"}, wantDNS: []string{"kcp.example.com"}},
		{name: "issuerRef with only IPs: they replace the generated names too",
			spec:       &operatorv1alpha1.CertificateSpecTemplate{IssuerRef: acme, IPAddresses: []string{"192.0.2.7"}},
			wantIssuer: []string{"letsencrypt", "ClusterIssuer", "cert-manager.io"}, wantIPs: []string{"192.0.2.7"}},
		{name: "issuerRef without names: the generated names stay",
			spec:       &operatorv1alpha1.CertificateSpecTemplate{IssuerRef: &operatorv1alpha1.ObjectReference{Name: "vault", Kind: "Issuer", Group: "vault.example.com"}},
			wantIssuer: []string{"vault", "Issuer", "vault.example.com"}, wantDNS: leaf.DNSNames},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tmpl *operatorv1alpha1.CertificateTemplate
			if tt.spec != nil {
				tmpl = &operatorv1alpha1.CertificateTemplate{Spec: tt.spec}
			}
			cert := Certificate(Leaf("ns", leaf, nil, tmpl))
			ref := cert.Spec.IssuerRef
			assert.Equal(t, tt.wantIssuer, []string{*ref.Name, *ref.Kind, *ref.Group})
			assert.Equal(t, tt.wantDNS, cert.Spec.DNSNames)
			assert.Equal(t, tt.wantIPs, cert.Spec.IPAddresses)
		})
	}
}

// TestCertificateTemplateIssuerRefOnCA checks that an intermediate CA's template may have it
// issued elsewhere, as kcp-operator's CA templates may.
func TestCertificateTemplateIssuerRefOnCA(t *testing.T) {
	tmpl := &operatorv1alpha1.CertificateTemplate{Spec: &operatorv1alpha1.CertificateSpecTemplate{
		IssuerRef: &operatorv1alpha1.ObjectReference{Name: "corp-intermediate", Kind: "ClusterIssuer", Group: "cert-manager.io"}}}
	cert := Certificate(CA("ns", "rs-server-ca", nil, LocalIssuer("rs-ca"), tmpl))
	assert.Equal(t, "corp-intermediate", *cert.Spec.IssuerRef.Name)
	assert.Equal(t, "ClusterIssuer", *cert.Spec.IssuerRef.Kind)
	assert.True(t, *cert.Spec.IsCA)
}
