package link

import (
	"crypto/x509"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
)

// ConsumerKind is a kind of consumer a Link may admit.
type ConsumerKind string

// The consumer kinds. CacheClient is the cache-client of the CacheServer a Link names.
const (
	Shard       ConsumerKind = "Shard"
	FrontProxy  ConsumerKind = "FrontProxy"
	Kubeconfig  ConsumerKind = "Kubeconfig"
	CacheClient ConsumerKind = "CacheClient"
)

// CacheServerCA is the CA role of a CacheServer's CA, beside the RootShard's (pki.CA).
const CacheServerCA = linkpki.CacheServerCA

// RootShardKey names a RootShard.
type RootShardKey struct {
	Namespace, Name string
}

// Declaration is what the listener knows of a Link.
type Declaration struct {
	Namespace, Name, UID string
	// RootShard is the name of the RootShard it links, in the Link's namespace.
	RootShard string
	// Identity is the DNS SAN the remote's client certificate carries.
	Identity string
	// Consumers are the kinds the remote may realize (Shard, FrontProxy, Kubeconfig).
	Consumers []ConsumerKind
	// CacheServer is the name of the CacheServer whose cache-client the remote may have
	// signed; empty for none.
	CacheServer string
	// DNSNames are the names (exact, or "*." and one name) the remote's serving certificates
	// may carry.
	DNSNames []string
	// Deleting is true once the Link has a deletion timestamp: it admits nothing more.
	Deleting bool
}

// Key is the RootShard the declaration links.
func (d Declaration) Key() RootShardKey {
	return RootShardKey{Namespace: d.Namespace, Name: d.RootShard}
}

// Allows reports whether the declaration admits consumers of kind: one of its consumers, or
// CacheClient when it names a CacheServer.
func (d Declaration) Allows(kind ConsumerKind) bool {
	if kind == CacheClient {
		return d.CacheServer != ""
	}
	return slices.Contains(d.Consumers, kind)
}

// URI is the URI SAN of the declaration's client certificate: it names the Link by its UID,
// so that a Link deleted and made again with the same identity does not accept the
// certificate of the one before.
func (d Declaration) URI() string { return URI(d.Namespace, d.Name, d.UID) }

// URI is the URI SAN of the client certificate of the Link namespace/name with uid, as the
// builder of that certificate writes it.
func URI(namespace, name, uid string) string {
	return linkpki.IdentityURI(linkpki.Declaration{Namespace: namespace, Name: name, UID: types.UID(uid)})
}

// RootShardTrust is what the listener trusts for one RootShard.
type RootShardTrust struct {
	// LinkCAs are the certificates of its link CA's live slots: both while it rotates.
	LinkCAs []*x509.Certificate
	// ServerName is the SNI that selects its listener's serving certificate.
	ServerName string
}

// Trust is the RootShardTrust of each RootShard that has a link CA.
type Trust map[RootShardKey]RootShardTrust

// Operation is what a remote asks the listener.
type Operation string

// The operations.
const (
	// Sign asks a CSR to be signed for a consumer kind by a CA role.
	Sign Operation = "sign"
	// WatchBundles holds the stream of the trust bundles.
	WatchBundles Operation = "bundles"
	// ReportEvent reports the state of a consumer of a kind.
	ReportEvent Operation = "events"
)

// Request is what a request asks, from its route.
type Request struct {
	Operation Operation
	// Kind is the consumer kind it concerns: empty for WatchBundles.
	Kind ConsumerKind
	// Role is the CA role a Sign asks for.
	Role pki.CA
}
