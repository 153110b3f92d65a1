package link

import operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"

// The external cert-manager issuer a remote server serves: a linked consumer's Certificates
// name it (issuerRef {group: IssuerGroup, kind: IssuerKind, name: the local CA name
// pki.CAName(reference.JoinedName(kind, consumer), ca)}) where a joined consumer names its
// local CA Issuer, and the remote server signs their CertificateRequests over the link. It is
// no kind of the API: nothing is stored under it.
const (
	IssuerGroup = operatorv1alpha1.GroupName
	IssuerKind  = "LinkIssuer"
)
