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
type PKI = certificates.Objects

// BuildPKI returns the Issuers and Certificates of a RootShard's PKI (docs/PKI.md): its root CA,
// from the namespace bootstrap, the user's issuer or the user's CA Secret; the five
// intermediate CAs with their Issuers; the root shard's own leaf certificates; the server's
// identity toward it; and its managed etcd's certificates, when it has one.
func BuildPKI(rs *operatorv1alpha1.RootShard) PKI {
	ns, tmpl := rs.Namespace, templates(rs.Spec.CertificateTemplates)
	labels := func(component string) map[string]string { return pki.Labels(Kind, rs.Name, component) }

	rootCA := pki.RootCAName(rs.Name)
	// The root CA rotates in slots too, unless the user brings it (docs/rotation.md).
	out := certificates.RotatingRootCA(ns, rootCA, labels("root-ca"), rs.Spec.Certificates, tmpl(pki.RootCATemplateKey),
		pki.SlotsOf(rs.Status.Rotations, pki.RootAuthority))
	for _, ca := range pki.IntermediateCAs {
		certs, issuer := IntermediateCA(rs, ca)
		out.Certificates = append(out.Certificates, certs...)
		out.Issuers = append(out.Issuers, issuer)
	}
	leaves := append(Server(rs).Leaves(), OperatorLeaf(rs))
	if e := Etcd(rs); e != nil {
		leaves = append(leaves, e.Leaves()...)
	}
	for _, leaf := range leaves {
		out.Certificates = append(out.Certificates, certificates.Certificate(certificates.Leaf(ns, leaf, labels(leaf.Role), tmpl(leaf.Role))))
	}
	return out
}

// IntermediateCA builds the intermediate CA ca of rs below its root CA: the Certificate of
// each live slot (docs/rotation.md), signed by the root CA's Issuer and templated by the CA's
// key of spec.certificateTemplates, and the CA Issuer, which signs from one slot. The CAs of
// pki.IntermediateCAs are every RootShard's; the link CA (pki.LinkCA) is built the same way
// by pkg/resources/link, for a RootShard that a Link names.
func IntermediateCA(rs *operatorv1alpha1.RootShard, ca pki.CA) ([]*cmapply.CertificateApplyConfiguration, *cmapply.IssuerApplyConfiguration) {
	key := ca.TemplateKey()
	spec := certificates.CA(rs.Namespace, pki.CAName(rs.Name, ca), pki.Labels(Kind, rs.Name, key),
		certificates.LocalIssuer(pki.RootCAName(rs.Name)), templates(rs.Spec.CertificateTemplates)(key))
	return certificates.RotatingCA(spec, pki.SlotsOf(rs.Status.Rotations, pki.Authority(ca)))
}

// OperatorLeaf is the server's own client certificate toward rs's kcp (OperatorSecretName):
// not one of the shard's leaves, so no pod mounts it.
func OperatorLeaf(rs *operatorv1alpha1.RootShard) pki.Leaf {
	return pki.Leaf{Name: OperatorSecretName(rs), Role: OperatorRole, Issuer: pki.CAName(rs.Name, pki.ClientCA),
		CommonName: OperatorCommonName, Organization: []string{OperatorGroup}, Usage: pki.ClientAuth}
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
