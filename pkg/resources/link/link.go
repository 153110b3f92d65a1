// Package link builds the PKI of the links between a RootShard and its remote consumers
// (docs/PKI.md#the-link-pki): the RootShard's link CA and its Issuer, the listener's serving
// certificate, each Link's client certificate, and the bootstrap Secret that is carried to
// the remote once; and it resolves a bootstrap Secret on the remote side. Every function is
// pure.
package link

import (
	"strings"

	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Kind is the owner label's kind of what a Link owns (operator.kcp.io/link).
const Kind = "link"

// Declaration is what the builders need of a Link: the controller fills it from the Link and
// the RootShard it names.
type Declaration struct {
	// Namespace, Name and UID are the Link's. The UID is in its client certificate, so that
	// a Link deleted and made again with the same identity does not accept the old one.
	Namespace, Name string
	UID             types.UID
	// Identity is the DNS name the remote's client certificate carries (SAN pinning).
	Identity string
	// RootShard is the RootShard the Link names, in the Link's namespace.
	RootShard *operatorv1alpha1.RootShard
	// ListenerURL is the https URL at which the remote reaches the listener.
	ListenerURL string
}

// The roles (and component labels) of the link's certificates and Secrets.
const (
	// ServerRole is the listener's serving certificate, one per RootShard.
	ServerRole = "link-server"
	// ClientRole is a Link's client certificate.
	ClientRole = "link-client"
	// BootstrapRole is a Link's bootstrap Secret, and its reference label's value.
	BootstrapRole = "link-bootstrap"
)

// CAName is the name of the link CA of the RootShard rs: its Certificate (slot 0), Secret
// and Issuer; slot 1 is <ca>-next and the bundle of its live slots <ca>-trust, as for every
// CA of a RootShard (pki.SlotName, pki.TrustSuffix).
func CAName(rs *operatorv1alpha1.RootShard) string { return pki.CAName(rs.Name, pki.LinkCA) }

// Authority is the link CA's name in status.rotations and the rotation subresource.
const Authority = pki.Authority(pki.LinkCA)

// ServerCertificateName is the Certificate and Secret of the listener's serving certificate
// for the RootShard rs.
func ServerCertificateName(rs *operatorv1alpha1.RootShard) string { return rs.Name + "-" + ServerRole }

// ClientName is the Certificate and Secret of the client certificate of the Link link.
func ClientName(link string) string { return link + "-" + ClientRole }

// BootstrapName is the bootstrap Secret of the Link link.
func BootstrapName(link string) string { return link + "-" + BootstrapRole }

// ServerNameSuffix ends every listener's server name.
const ServerNameSuffix = ".link.kcp-setups.local"

// ServerName is the name the remotes of the RootShard rs send as SNI, by which the listener
// picks rs's serving certificate, and the one DNS SAN of that certificate:
// <rootshard>.<namespace>.link.kcp-setups.local. It is a name, not an address: the remote
// dials the listener's URL and verifies the server by this name and the link CA alone, so
// the listener may be reached by any address without a new certificate. A namespace is a
// DNS label, so no two RootShards share it; each of its labels fits 63 characters and the
// whole fits 253 (a RootShard's name has at most 40).
func ServerName(rs *operatorv1alpha1.RootShard) string {
	return rs.Name + "." + rs.Namespace + ServerNameSuffix
}

// URIPrefix starts the URI SAN of every link client certificate.
const URIPrefix = "kcp-setups:link:"

// IdentityURI is the URI SAN of the Link's client certificate:
// kcp-setups:link:<namespace>/<name>/<uid>.
func IdentityURI(d Declaration) string {
	return URIPrefix + d.Namespace + "/" + d.Name + "/" + string(d.UID)
}

// Ref names a Link as its client certificate's URI SAN does.
type Ref struct {
	Namespace, Name string
	UID             types.UID
}

// ParseIdentityURI reads the URI SAN uri of a link client certificate (IdentityURI); ok is
// false for any other URI.
func ParseIdentityURI(uri string) (ref Ref, ok bool) {
	rest, found := strings.CutPrefix(uri, URIPrefix)
	if !found {
		return Ref{}, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return Ref{}, false
	}
	return Ref{Namespace: parts[0], Name: parts[1], UID: types.UID(parts[2])}, true
}
