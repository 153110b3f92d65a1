package certificates

import (
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Objects are cert-manager objects to apply, Issuers first.
type Objects struct {
	Issuers      []*cmapply.IssuerApplyConfiguration
	Certificates []*cmapply.CertificateApplyConfiguration
	// Bootstrap is true when they include the namespace bootstrap PKI, which is shared by
	// every setup of the namespace without spec.certificates, and has no owner label.
	Bootstrap bool
}

// RootCA builds the top CA of a setup, name, with its CA Issuer of the same name, from the
// setup's spec.certificates (docs/PKI.md): the user's CA Secret backs the Issuer directly; the
// user's issuer signs it; without either, the namespace bootstrap signs it, and the
// bootstrap's objects come with it.
func RootCA(namespace, name string, labels map[string]string, c *operatorv1alpha1.Certificates, tmpl *operatorv1alpha1.CertificateTemplate) Objects {
	var out Objects
	switch {
	case c != nil && c.CASecretRef != nil:
		out.Issuers = append(out.Issuers, CAIssuer(namespace, name, c.CASecretRef.Name, labels))
		return out
	case c != nil && c.IssuerRef != nil:
		ref := Issuer{Name: c.IssuerRef.Name, Kind: c.IssuerRef.Kind, Group: c.IssuerRef.Group}
		out.Certificates = append(out.Certificates, Certificate(CA(namespace, name, labels, ref, tmpl)))
	default:
		out = Bootstrap(namespace)
		out.Certificates = append(out.Certificates, Certificate(CA(namespace, name, labels, LocalIssuer(pki.BootstrapCA), tmpl)))
	}
	out.Issuers = append(out.Issuers, CAIssuer(namespace, name, name, labels))
	return out
}

// Bootstrap is the namespace bootstrap PKI: a self-signed Issuer and the CA it signs, with
// its CA Issuer. Every setup that uses it applies the same objects.
func Bootstrap(namespace string) Objects {
	labels := BootstrapLabels()
	return Objects{
		Bootstrap: true,
		Issuers: []*cmapply.IssuerApplyConfiguration{
			SelfSignedIssuer(namespace, pki.BootstrapIssuer, labels),
			CAIssuer(namespace, pki.BootstrapCA, pki.BootstrapCA, labels),
		},
		Certificates: []*cmapply.CertificateApplyConfiguration{
			Certificate(CA(namespace, pki.BootstrapCA, labels, LocalIssuer(pki.BootstrapIssuer), nil)),
		},
	}
}

// BootstrapLabels are the labels of the namespace bootstrap PKI.
func BootstrapLabels() map[string]string { return pki.BootstrapLabels() }

// IsBootstrap reports whether an object's labels mark it as part of the namespace bootstrap.
func IsBootstrap(labels map[string]string) bool {
	return labels[pki.LabelComponent] == BootstrapLabels()[pki.LabelComponent] && labels[pki.LabelManagedBy] == pki.ManagedBy
}
