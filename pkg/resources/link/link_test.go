package link

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// The names of the link PKI, and that none of them is a name the RootShard derives already.
func TestNames(t *testing.T) {
	rs, d := testRootShard(), testDeclaration()
	for _, tc := range []struct{ got, want string }{
		{CAName(rs), "root-link-ca"},
		{pki.SlotName(CAName(rs), 1), "root-link-ca-next"},
		{pki.LinkCA.TemplateKey(), "link-ca"},
		{Authority, "link"},
		{ServerCertificateName(rs), "root-link-server"},
		{ServerName(rs), "root.team-a.link.kcp-setups.local"},
		{ClientName(d.Name), "eu-1-link-client"},
		{BootstrapName(d.Name), "eu-1-link-bootstrap"},
		{IdentityURI(d), "kcp-setups:link:team-a/eu-1/6d1f0c2e-uid"},
		{string(BootstrapType), "operator.kcp.io/link-bootstrap"},
	} {
		assert.Equal(t, tc.want, tc.got)
	}
}

// The server name fits a DNS SAN for the longest RootShard name (40) and namespace (63).
func TestServerName(t *testing.T) {
	rs := testRootShard()
	rs.Name, rs.Namespace = strings.Repeat("r", 40), strings.Repeat("n", 63)
	assert.Empty(t, validation.IsDNS1123Subdomain(ServerName(rs)))
}

func TestParseIdentityURI(t *testing.T) {
	for _, tc := range []struct {
		uri  string
		want Ref
		ok   bool
	}{
		{IdentityURI(testDeclaration()), Ref{Namespace: "team-a", Name: "eu-1", UID: "6d1f0c2e-uid"}, true},
		{"kcp-setups:link:team-a/eu-1", Ref{}, false},
		{"kcp-setups:link:team-a/eu-1/uid/more", Ref{}, false},
		{"kcp-setups:link:team-a//uid", Ref{}, false},
		{"kcp-setups:link:/eu-1/uid", Ref{}, false},
		{"kcp-setups:link:team-a/eu-1/", Ref{}, false},
		{"spiffe://team-a/eu-1/uid", Ref{}, false},
		{"", Ref{}, false},
	} {
		got, ok := ParseIdentityURI(tc.uri)
		assert.Equal(t, tc.ok, ok, tc.uri)
		assert.Equal(t, tc.want, got, tc.uri)
	}
}
