// Package rootshard builds what a RootShard needs in the host cluster from its spec alone:
// its PKI now, its workloads next. Every function is pure.
package rootshard

import (
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// Kind is the owner label's kind of everything a RootShard owns.
const Kind = kcp.RootShardKind

// PKI is the cert-manager objects of a RootShard's certificate hierarchy.
type PKI struct {
	Issuers      []*cmapply.IssuerApplyConfiguration
	Certificates []*cmapply.CertificateApplyConfiguration
	// Bootstrap is true when the RootShard uses the namespace bootstrap PKI, whose objects
	// are shared and have no owner label.
	Bootstrap bool
}

// BuildPKI returns the Issuers and Certificates of a RootShard's PKI (PKI.md): its root CA,
// from the namespace bootstrap, the user's issuer or the user's CA Secret; the five
// intermediate CAs with their Issuers; and the root shard's own leaf certificates.
func BuildPKI(rs *operatorv1alpha1.RootShard) PKI {
	ns, tmpl := rs.Namespace, templates(rs.Spec.CertificateTemplates)
	labels := func(component string) map[string]string { return pki.Labels(Kind, rs.Name, component) }
	var out PKI

	rootCA := pki.RootCAName(rs.Name)
	switch c := rs.Spec.Certificates; {
	case c != nil && c.CASecretRef != nil:
		// The user's CA signs the intermediates directly.
		out.Issuers = append(out.Issuers, certificates.CAIssuer(ns, rootCA, c.CASecretRef.Name, labels("root-ca")))
	case c != nil && c.IssuerRef != nil:
		ref := certificates.Issuer{Name: c.IssuerRef.Name, Kind: c.IssuerRef.Kind, Group: c.IssuerRef.Group}
		out.Certificates = append(out.Certificates, certificates.Certificate(certificates.CA(ns, rootCA, labels("root-ca"), ref, tmpl(pki.RootCATemplateKey))))
		out.Issuers = append(out.Issuers, certificates.CAIssuer(ns, rootCA, rootCA, labels("root-ca")))
	default:
		out.Bootstrap = true
		bootstrap := BootstrapLabels()
		out.Issuers = append(out.Issuers,
			certificates.SelfSignedIssuer(ns, pki.BootstrapIssuer, bootstrap),
			certificates.CAIssuer(ns, pki.BootstrapCA, pki.BootstrapCA, bootstrap))
		out.Certificates = append(out.Certificates,
			certificates.Certificate(certificates.CA(ns, pki.BootstrapCA, bootstrap, certificates.LocalIssuer(pki.BootstrapIssuer), nil)),
			certificates.Certificate(certificates.CA(ns, rootCA, labels("root-ca"), certificates.LocalIssuer(pki.BootstrapCA), tmpl(pki.RootCATemplateKey))))
		out.Issuers = append(out.Issuers, certificates.CAIssuer(ns, rootCA, rootCA, labels("root-ca")))
	}

	for _, ca := range pki.IntermediateCAs {
		name := pki.CAName(rs.Name, ca)
		out.Certificates = append(out.Certificates,
			certificates.Certificate(certificates.CA(ns, name, labels(ca.TemplateKey()), certificates.LocalIssuer(rootCA), tmpl(ca.TemplateKey()))))
		out.Issuers = append(out.Issuers, certificates.CAIssuer(ns, name, name, labels(ca.TemplateKey())))
	}

	for _, leaf := range Shard(rs).Leaves() {
		out.Certificates = append(out.Certificates, certificates.Certificate(certificates.Leaf(ns, leaf, labels(leaf.Role), tmpl(leaf.Role))))
	}
	return out
}

// BootstrapLabels are the labels of the shared namespace bootstrap PKI.
func BootstrapLabels() map[string]string {
	return map[string]string{pki.LabelManagedBy: pki.ManagedBy, pki.LabelComponent: "pki-bootstrap", pki.LabelInstance: pki.BootstrapCA}
}

// templates returns a lookup of the user's template for a role.
func templates(m operatorv1alpha1.CertificateTemplateMap) func(string) *operatorv1alpha1.CertificateTemplate {
	return func(role string) *operatorv1alpha1.CertificateTemplate {
		if t, ok := m[role]; ok {
			return &t
		}
		return nil
	}
}
