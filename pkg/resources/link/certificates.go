package link

import (
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// RootShardPKI builds the link PKI of the RootShard rs, for a RootShard that a Link names:
// the link CA, built as every intermediate CA of rs (rootshard.IntermediateCA: signed by its
// root CA's Issuer, templated by spec.certificateTemplates["link-ca"], one Certificate per
// live slot of the authority "link"), its CA Issuer, and the listener's serving certificate.
func RootShardPKI(rs *operatorv1alpha1.RootShard) certificates.Objects {
	certs, issuer := rootshard.IntermediateCA(rs, pki.LinkCA)
	server := certificates.Certificate(certificates.Leaf(rs.Namespace, ServerLeaf(rs), pki.Labels(rootshard.Kind, rs.Name, ServerRole), nil))
	return certificates.Objects{
		Issuers:      []*cmapply.IssuerApplyConfiguration{issuer},
		Certificates: append(certs, server),
	}
}

// The link's leaves take no certificate template: the remote verifies the listener by the
// link CA and the server name alone, and the listener a remote by the link CA and its two
// SANs, so another issuer or other names could only break the pin.

// ServerLeaf is the listener's serving certificate for the RootShard rs: signed by its link
// CA, for server auth, its one DNS SAN the server name.
func ServerLeaf(rs *operatorv1alpha1.RootShard) pki.Leaf {
	return pki.Leaf{Name: ServerCertificateName(rs), Role: ServerRole, Issuer: CAName(rs),
		CommonName: ServerCertificateName(rs), DNSNames: []string{ServerName(rs)}, Usage: pki.ServerAuth}
}

// ClientLeaf is the client certificate of the Link d: signed by its RootShard's link CA, for
// client auth only, its CommonName and one DNS SAN the Link's identity, its one URI SAN the
// Link itself (IdentityURI).
func ClientLeaf(d Declaration) pki.Leaf {
	return pki.Leaf{Name: ClientName(d.Name), Role: ClientRole, Issuer: CAName(d.RootShard),
		CommonName: d.Identity, DNSNames: []string{d.Identity}, URIs: []string{IdentityURI(d)}, Usage: pki.ClientAuth}
}

// Client builds the Certificate of the Link d's client certificate, owned by the Link, with a
// leaf's lifetime and a new key at each renewal.
func Client(d Declaration) *cmapply.CertificateApplyConfiguration {
	return certificates.Certificate(certificates.Leaf(d.Namespace, ClientLeaf(d), pki.Labels(Kind, d.Name, ClientRole), nil))
}
