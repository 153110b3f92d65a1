// Package rootshard builds what a RootShard needs in the host cluster from its spec alone:
// its PKI now, its workloads next. Every function is pure.
package rootshard

import (
	"net/url"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
)

// Kind is the owner label's kind of everything a RootShard owns.
const Kind = "rootshard"

// ServiceName is the name of the root shard's Service and the base of its DNS names.
func ServiceName(rs *operatorv1alpha1.RootShard) string { return rs.Name + "-kcp" }

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

	for _, leaf := range Leaves(rs) {
		out.Certificates = append(out.Certificates, certificates.Certificate(certificates.Leaf(ns, leaf, labels(leaf.Role), tmpl(leaf.Role))))
	}
	return out
}

// BootstrapLabels are the labels of the shared namespace bootstrap PKI.
func BootstrapLabels() map[string]string {
	return map[string]string{pki.LabelManagedBy: pki.ManagedBy, pki.LabelComponent: "pki-bootstrap", pki.LabelInstance: pki.BootstrapCA}
}

// Leaves are the root shard's own certificates.
func Leaves(rs *operatorv1alpha1.RootShard) []pki.Leaf {
	name := rs.Name
	return []pki.Leaf{
		{Name: name + "-server", Role: "server", Issuer: pki.CAName(name, pki.ServerCA), CommonName: name,
			DNSNames: serverDNSNames(rs), Usage: pki.ServerAuth},
		{Name: name + "-client", Role: "client", Issuer: pki.CAName(name, pki.ClientCA), CommonName: "shard-" + name,
			Organization: []string{"system:masters"}, Usage: pki.ClientAuth},
		{Name: name + "-service-account", Role: "service-account", Issuer: pki.CAName(name, pki.ServiceAccountCA),
			CommonName: name + "-service-account", Usage: pki.Signing},
		{Name: name + "-logical-cluster-admin", Role: "logical-cluster-admin", Issuer: pki.CAName(name, pki.ClientCA),
			CommonName: "logical-cluster-admin", Organization: []string{"system:kcp:logical-cluster-admin"}, Usage: pki.ClientAuth},
		{Name: name + "-external-logical-cluster-admin", Role: "external-logical-cluster-admin", Issuer: pki.CAName(name, pki.ClientCA),
			CommonName: "external-logical-cluster-admin", Organization: []string{"system:kcp:external-logical-cluster-admin"}, Usage: pki.ClientAuth},
	}
}

// serverDNSNames are the names the root shard is reached by: its Service in every form,
// its external hostname, the host of its base URL, and localhost for its own probes.
func serverDNSNames(rs *operatorv1alpha1.RootShard) []string {
	svc := ServiceName(rs)
	names := []string{svc, svc + "." + rs.Namespace, svc + "." + rs.Namespace + ".svc",
		svc + "." + rs.Namespace + ".svc." + clusterDomain(rs.Spec.ClusterDomain)}
	if h := rs.Spec.External.Hostname; h != "" {
		names = append(names, h)
	}
	if u, err := url.Parse(rs.Spec.ShardBaseURL); err == nil && u.Hostname() != "" {
		names = append(names, u.Hostname())
	}
	return append(names, "localhost")
}

func clusterDomain(d string) string {
	if d == "" {
		return operatorv1alpha1.DefaultClusterDomain
	}
	return d
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
