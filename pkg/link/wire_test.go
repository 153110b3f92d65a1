package link

import (
	"crypto/x509"
	"encoding/json"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
)

// TestCheckRenewal: the remote may have signed again exactly the client certificate the home
// issued it (resources/link.Client), and nothing else.
func TestCheckRenewal(t *testing.T) {
	d := Declaration{Namespace: "a", Name: "eu-1", UID: "u-1", RootShard: "root", Identity: "eu-1.remotes.example.com"}
	ld := linkpki.Declaration{Namespace: d.Namespace, Name: d.Name, UID: "u-1", Identity: d.Identity,
		RootShard: &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "a"}}}
	issued := specOf(linkpki.Client(ld))
	require.Equal(t, d.Identity, issued.CommonName, "the builder's client certificate")
	with := func(edit func(*cmv1.CertificateSpec)) cmv1.CertificateSpec {
		s := *issued.DeepCopy()
		edit(&s)
		return s
	}
	assert.NoError(t, CheckRenewal(csrOf(t, issued, nil), d), "the certificate the builder issues")
	for name, csr := range map[string]*x509.CertificateRequest{
		"another CN": csrOf(t, with(func(s *cmv1.CertificateSpec) { s.CommonName = "eu-2.remotes.example.com" }), nil),
		"system:masters": csrOf(t, with(func(s *cmv1.CertificateSpec) {
			s.Subject = &cmv1.X509Subject{Organizations: []string{"system:masters"}}
		}), nil),
		"a second DNS SAN":   csrOf(t, with(func(s *cmv1.CertificateSpec) { s.DNSNames = append(s.DNSNames, "eu-2.remotes.example.com") }), nil),
		"no URI":             csrOf(t, with(func(s *cmv1.CertificateSpec) { s.URIs = nil }), nil),
		"another Link's URI": csrOf(t, with(func(s *cmv1.CertificateSpec) { s.URIs = []string{URI("a", "eu-1", "u-0")} }), nil),
		"an IP SAN":          csrOf(t, with(func(s *cmv1.CertificateSpec) { s.IPAddresses = []string{"10.0.0.1"} }), nil),
		"server usage":       csrOf(t, with(func(s *cmv1.CertificateSpec) { s.Usages = pki.ServerAuth.KeyUsages() }), nil),
		"a CA":               csrOf(t, issued, nil, withBasicConstraints(true)),
		"none":               nil,
	} {
		assert.Error(t, CheckRenewal(csr, d), name)
	}
}

// TestWireNames: the JSON names of the bodies are the documented ones (docs/links.md#the-wire).
func TestWireNames(t *testing.T) {
	ev := Event{ConsumerKey: ConsumerKey{Kind: Shard, Namespace: "b", Name: "s"}, UID: "u", Generation: 2, Sequence: 7,
		State: ConsumerReport{Realized: true, CAs: map[pki.CA]CATrust{pki.ServerCA: {Trusted: []string{"f"}}}, KcpShard: "s", BaseURL: "https://s"}}
	b, err := json.Marshal(ev)
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"Shard","namespace":"b","name":"s","uid":"u","generation":2,"sequence":7,
		"state":{"realized":true,"available":false,"cas":{"server":{"trusted":["f"]}},"kcpShard":"s","baseURL":"https://s"}}`, string(b))
	var back Event
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, ev, back)

	b, err = json.Marshal(SignRequest{Request: []byte("pem")})
	require.NoError(t, err)
	assert.JSONEq(t, `{"request":"cGVt"}`, string(b), "a renewal names no consumer")
	b, err = json.Marshal(StreamMessage{Type: HeartbeatMessage})
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"Heartbeat"}`, string(b))
	b, err = json.Marshal(Bundles{Revision: "r", LinkCA: []byte("both"), LinkCAIssuer: []byte("new")})
	require.NoError(t, err)
	assert.JSONEq(t, `{"revision":"r","references":null,"linkCA":"Ym90aA==","linkCAIssuer":"bmV3"}`, string(b))
}
