// Package remote is the remote server's side of a link (docs/links.md#the-remote-side): a
// Client that speaks to a RootShard's listener with the pair of a bootstrap Secret, the
// Manager that holds one Client and one bundle stream per bootstrap Secret the linked
// consumers name (writing what the stream sends into the bundles Secret, renewing the
// client certificate at two thirds of its life, keeping a State per bootstrap Secret), and
// the external cert-manager issuer LinkIssuer that forwards the CertificateRequests of
// linked consumers over the link.
//
// The remote holds no CA private key: its leaves' keys are made by cert-manager in the
// remote cluster, only their CSRs cross the link, and the stream sends no key.
package remote
