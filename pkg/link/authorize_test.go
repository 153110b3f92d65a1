package link

import (
	"crypto/x509"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// allReasons are the refusals of Authorize: TestAuthorize has a case of each.
var allReasons = []Reason{NoClientCertificate, UnknownIdentity, UntrustedChain, DeclarationMismatch, NotYetValid, Expired,
	WrongServerName, DeclarationDeleting, ConsumerKindNotAllowed, OperationNotAllowed}

func TestAuthorize(t *testing.T) {
	rsA, rsB := RootShardKey{Namespace: "a", Name: "root"}, RootShardKey{Namespace: "b", Name: "root"}
	caA, caANext, caB, stranger := newCA(t, "a-link-ca"), newCA(t, "a-link-ca-next"), newCA(t, "b-link-ca"), newCA(t, "stranger")
	eu1 := Declaration{Namespace: "a", Name: "eu-1", UID: "uid-eu-1", RootShard: "root", Identity: "eu-1.links.example.com",
		Consumers: []ConsumerKind{Shard, Kubeconfig}, CacheServer: "cache"}
	us1 := Declaration{Namespace: "b", Name: "us-1", UID: "uid-us-1", RootShard: "root", Identity: "us-1.links.example.com",
		Consumers: []ConsumerKind{FrontProxy}}
	// The same identity declared for another RootShard: identities are unique per RootShard only.
	eu1B := Declaration{Namespace: "b", Name: "eu-1", UID: "uid-eu-1-b", RootShard: "root", Identity: eu1.Identity,
		Consumers: []ConsumerKind{FrontProxy}}
	gone := Declaration{Namespace: "a", Name: "gone", UID: "uid-gone", RootShard: "root", Identity: "gone.links.example.com",
		Consumers: []ConsumerKind{Shard}, Deleting: true}
	// Half-made declarations match nothing.
	noIdentity := Declaration{Namespace: "a", Name: "blank", UID: "uid-blank", RootShard: "root", Consumers: []ConsumerKind{Shard}}
	noUID := Declaration{Namespace: "a", Name: "new", RootShard: "root", Identity: "new.links.example.com", Consumers: []ConsumerKind{Shard}}
	declarations := []Declaration{eu1, us1, eu1B, gone, noIdentity, noUID}
	trust := Trust{
		// rotating: both slots
		rsA: {LinkCAs: []*x509.Certificate{caA.Cert, caANext.Cert}, ServerName: "root.a.link"},
		rsB: {LinkCAs: []*x509.Certificate{caB.Cert}, ServerName: "root.b.link"},
	}
	cert := func(ca testCA, l leaf) []*x509.Certificate {
		c, _ := ca.issue(t, l)
		return []*x509.Certificate{c}
	}
	withDates := func(l leaf, from, to time.Time) leaf { l.from, l.to = from, to; return l }
	eu1Cert := cert(caA, client(eu1.Identity, eu1.URI()))
	signServer := Request{Operation: Sign, Kind: Shard, Role: pki.ServerCA}
	seen := map[Reason]bool{}

	for _, tc := range []struct {
		name        string
		peer        []*x509.Certificate
		sni         string
		request     Request
		trust       Trust
		reason      Reason
		declaration *Declaration
	}{
		{name: "a Shard's serving certificate", peer: eu1Cert, sni: "root.a.link", request: signServer, declaration: &eu1},
		{name: "the bundles", peer: eu1Cert, sni: "root.a.link", request: Request{Operation: WatchBundles}, declaration: &eu1},
		{name: "an event of a Kubeconfig", peer: eu1Cert, sni: "root.a.link", request: Request{Operation: ReportEvent, Kind: Kubeconfig}, declaration: &eu1},
		{name: "the cache-client of the declared CacheServer", peer: eu1Cert, sni: "root.a.link",
			request: Request{Operation: Sign, Kind: CacheClient, Role: CacheServerCA}, declaration: &eu1},
		{name: "a certificate of the new link CA while it rotates", peer: cert(caANext, client(eu1.Identity, eu1.URI())), sni: "root.a.link",
			request: signServer, declaration: &eu1},
		{name: "the same identity at another RootShard", peer: cert(caB, client(eu1B.Identity, eu1B.URI())), sni: "root.b.link",
			request: Request{Operation: Sign, Kind: FrontProxy, Role: pki.ServerCA}, declaration: &eu1B},

		{name: "no client certificate", sni: "root.a.link", request: signServer, reason: NoClientCertificate},
		{name: "no declaration with the identity", peer: cert(caA, client("nobody.links.example.com", eu1.URI())), sni: "root.a.link",
			request: signServer, reason: UnknownIdentity},
		{name: "a declaration without an identity", peer: cert(caA, client("", noIdentity.URI())), sni: "root.a.link",
			request: signServer, reason: UnknownIdentity},
		{name: "a declaration without a UID", peer: cert(caA, client(noUID.Identity, noUID.URI())), sni: "root.a.link",
			request: signServer, reason: UnknownIdentity},
		{name: "another remote's SAN from this RootShard's link CA", peer: cert(caA, client(us1.Identity, eu1.URI())), sni: "root.b.link",
			request: Request{Operation: Sign, Kind: FrontProxy, Role: pki.ServerCA}, reason: UntrustedChain},
		{name: "another CA", peer: cert(stranger, client(eu1.Identity, eu1.URI())), sni: "root.a.link", request: signServer, reason: UntrustedChain},
		{name: "another RootShard's link CA", peer: cert(caB, client(eu1.Identity, eu1.URI())), sni: "root.a.link", request: signServer,
			reason: UntrustedChain},
		{name: "no link CA for the RootShard yet", peer: eu1Cert, sni: "root.a.link", request: signServer, trust: Trust{rsB: trust[rsB]},
			reason: UntrustedChain},
		{name: "a serving certificate of the link CA", peer: cert(caA, leaf{dns: []string{eu1.Identity}, uris: []string{eu1.URI()},
			from: now.Add(-time.Hour), to: now.Add(time.Hour), usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}),
			sni: "root.a.link", request: signServer, reason: UntrustedChain},
		{name: "a stranger's certificate with another UID", peer: cert(stranger, client(eu1.Identity, URI("a", "eu-1", "old"))),
			sni: "root.a.link", request: signServer, reason: UntrustedChain},
		{name: "the certificate of a deleted Link of the same name and identity", peer: cert(caA, client(eu1.Identity, URI("a", "eu-1", "old"))),
			sni: "root.a.link", request: signServer, reason: DeclarationMismatch, declaration: &eu1},
		{name: "no URI SAN", peer: cert(caA, client(eu1.Identity, "")), sni: "root.a.link", request: signServer,
			reason: DeclarationMismatch, declaration: &eu1},
		{name: "the URI of another declaration", peer: cert(caA, client(eu1.Identity, gone.URI())), sni: "root.a.link", request: signServer,
			reason: DeclarationMismatch, declaration: &eu1},
		{name: "expired", peer: cert(caA, withDates(client(eu1.Identity, eu1.URI()), now.Add(-48*time.Hour), now.Add(-time.Second))),
			sni: "root.a.link", request: signServer, reason: Expired, declaration: &eu1},
		{name: "not yet valid", peer: cert(caA, withDates(client(eu1.Identity, eu1.URI()), now.Add(time.Minute), now.Add(48*time.Hour))),
			sni: "root.a.link", request: signServer, reason: NotYetValid, declaration: &eu1},
		{name: "another RootShard's server name", peer: eu1Cert, sni: "root.b.link", request: signServer, reason: WrongServerName, declaration: &eu1},
		{name: "no server name", peer: eu1Cert, request: signServer, reason: WrongServerName, declaration: &eu1},
		{name: "a declaration being deleted", peer: cert(caA, client(gone.Identity, gone.URI())), sni: "root.a.link", request: signServer,
			reason: DeclarationDeleting, declaration: &gone},
		{name: "a consumer kind not declared", peer: eu1Cert, sni: "root.a.link", request: Request{Operation: Sign, Kind: FrontProxy, Role: pki.ServerCA},
			reason: ConsumerKindNotAllowed, declaration: &eu1},
		{name: "an event of a consumer kind not declared", peer: eu1Cert, sni: "root.a.link",
			request: Request{Operation: ReportEvent, Kind: FrontProxy}, reason: ConsumerKindNotAllowed, declaration: &eu1},
		{name: "a cache-client without a CacheServer", peer: cert(caB, client(us1.Identity, us1.URI())), sni: "root.b.link",
			request: Request{Operation: Sign, Kind: CacheClient, Role: CacheServerCA}, reason: ConsumerKindNotAllowed, declaration: &us1},
		{name: "a RootShard", peer: eu1Cert, sni: "root.a.link", request: Request{Operation: Sign, Kind: "RootShard", Role: pki.ServerCA},
			reason: ConsumerKindNotAllowed, declaration: &eu1},
		{name: "a CA the kind is not issued from", peer: eu1Cert, sni: "root.a.link", request: Request{Operation: Sign, Kind: Kubeconfig, Role: pki.ClientCA},
			reason: OperationNotAllowed, declaration: &eu1},
		{name: "an unknown operation", peer: eu1Cert, sni: "root.a.link", request: Request{}, reason: OperationNotAllowed, declaration: &eu1},
		{name: "the bundles of a kind", peer: eu1Cert, sni: "root.a.link", request: Request{Operation: WatchBundles, Kind: Shard},
			reason: OperationNotAllowed, declaration: &eu1},
	} {
		seen[tc.reason] = true
		t.Run(tc.name, func(t *testing.T) {
			tr := trust
			if tc.trust != nil {
				tr = tc.trust
			}
			d := Authorize(tc.peer, tc.sni, tc.request, declarations, tr, now)
			assert.Equal(t, tc.reason, d.Reason)
			assert.Equal(t, tc.reason == "", d.Allowed())
			if tc.declaration == nil {
				assert.Nil(t, d.Declaration, "a refusal no link CA vouches for names no declaration")
			} else {
				require.NotNil(t, d.Declaration)
				assert.Equal(t, tc.declaration.UID, d.Declaration.UID)
			}
		})
	}
	for _, r := range allReasons {
		assert.True(t, seen[r], "a case is refused with %s", r)
	}
}

// TestEveryReasonIsListed keeps allReasons, which TestAuthorize covers, the Reason constants
// of authorize.go.
func TestEveryReasonIsListed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "authorize.go", nil, 0)
	require.NoError(t, err)
	var declared []string
	for _, decl := range f.Decls {
		if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, spec := range g.Specs {
				if v := spec.(*ast.ValueSpec); v.Type != nil && fmt.Sprint(v.Type) == "Reason" {
					for _, n := range v.Names {
						declared = append(declared, n.Name)
					}
				}
			}
		}
	}
	assert.Len(t, declared, len(allReasons), "allReasons lists every Reason of authorize.go: %v", declared)
}
