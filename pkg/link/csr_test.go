package link

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"net"
	"net/url"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// csrOpt changes a CSR template.
type csrOpt func(*x509.CertificateRequest)

// withBasicConstraints encodes spec.isCA in the CSR, as cert-manager does behind an option.
func withBasicConstraints(isCA bool) csrOpt {
	return func(r *x509.CertificateRequest) {
		v, err := asn1.Marshal(struct {
			IsCA       bool `asn1:"optional"`
			MaxPathLen int  `asn1:"optional,default:-1"`
		}{IsCA: isCA, MaxPathLen: -1})
		if err != nil {
			panic(err)
		}
		r.ExtraExtensions = append(r.ExtraExtensions, pkix.Extension{Id: asn1.ObjectIdentifier{2, 5, 29, 19}, Critical: true, Value: v})
	}
}

// csrOf is the CSR cert-manager makes for a Certificate of spec, as the remote's would: its
// subject, its SANs, and its usages as key usage and extended key usage extensions; signed
// with key (a P-256 one when nil).
func csrOf(t *testing.T, spec cmv1.CertificateSpec, key crypto.Signer, opts ...csrOpt) *x509.CertificateRequest {
	t.Helper()
	if key == nil {
		key = newKey(t)
	}
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: spec.CommonName}, DNSNames: spec.DNSNames, EmailAddresses: spec.EmailAddresses}
	if s := spec.Subject; s != nil {
		tmpl.Subject.Organization, tmpl.Subject.OrganizationalUnit = s.Organizations, s.OrganizationalUnits
	}
	for _, ip := range spec.IPAddresses {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	for _, u := range spec.URIs {
		parsed, err := url.Parse(u)
		require.NoError(t, err)
		tmpl.URIs = append(tmpl.URIs, parsed)
	}
	var ku x509.KeyUsage
	var eku []asn1.ObjectIdentifier
	for _, u := range spec.Usages {
		switch u {
		case cmv1.UsageDigitalSignature:
			ku |= x509.KeyUsageDigitalSignature
		case cmv1.UsageKeyEncipherment:
			ku |= x509.KeyUsageKeyEncipherment
		case cmv1.UsageCertSign:
			ku |= x509.KeyUsageCertSign
		case cmv1.UsageServerAuth:
			eku = append(eku, asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 1})
		case cmv1.UsageClientAuth:
			eku = append(eku, asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 2})
		default:
			t.Fatalf("no encoding of usage %s in this test", u)
		}
	}
	if ku != 0 {
		var bits asn1.BitString
		for i := range 9 {
			if ku&(1<<i) != 0 {
				for len(bits.Bytes) <= i/8 {
					bits.Bytes = append(bits.Bytes, 0)
				}
				bits.Bytes[i/8] |= 0x80 >> (i % 8)
				bits.BitLength = i + 1
			}
		}
		v, err := asn1.Marshal(bits)
		require.NoError(t, err)
		tmpl.ExtraExtensions = append(tmpl.ExtraExtensions, pkix.Extension{Id: asn1.ObjectIdentifier{2, 5, 29, 15}, Critical: true, Value: v})
	}
	if len(eku) > 0 {
		v, err := asn1.Marshal(eku)
		require.NoError(t, err)
		tmpl.ExtraExtensions = append(tmpl.ExtraExtensions, pkix.Extension{Id: asn1.ObjectIdentifier{2, 5, 29, 37}, Value: v})
	}
	for _, o := range opts {
		o(tmpl)
	}
	return rawCSR(t, tmpl, key)
}

// rawCSR is a CSR made with crypto/x509 alone, for what cert-manager would not make.
func rawCSR(t *testing.T, tmpl *x509.CertificateRequest, key crypto.Signer) *x509.CertificateRequest {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	require.NoError(t, err)
	csr, err := x509.ParseCertificateRequest(der)
	require.NoError(t, err)
	return csr
}

func TestCheckCSR(t *testing.T) {
	d := Declaration{Namespace: "a", Name: "eu-1", Consumers: []ConsumerKind{Shard, FrontProxy, Kubeconfig}, CacheServer: "cache",
		DNSNames: []string{"*.eu.kcp.example.com", "shard.eu.example.com"}}
	server := pki.ServerAuth.KeyUsages()
	clientUsages := pki.ClientAuth.KeyUsages()
	serving := func(cn string, dns ...string) cmv1.CertificateSpec {
		return cmv1.CertificateSpec{CommonName: cn, DNSNames: dns, Usages: server}
	}
	clientOf := func(cn string, o ...string) cmv1.CertificateSpec {
		s := cmv1.CertificateSpec{CommonName: cn, Usages: clientUsages}
		if len(o) > 0 {
			s.Subject = &cmv1.X509Subject{Organizations: o}
		}
		return s
	}
	with := func(s cmv1.CertificateSpec, edit func(*cmv1.CertificateSpec)) cmv1.CertificateSpec {
		edit(&s)
		return s
	}
	rsaKey := func(bits int) crypto.Signer {
		k, err := rsa.GenerateKey(rand.Reader, bits)
		require.NoError(t, err)
		return k
	}
	ecKey := func(c elliptic.Curve) crypto.Signer {
		k, err := ecdsa.GenerateKey(c, rand.Reader)
		require.NoError(t, err)
		return k
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	badSignature := csrOf(t, clientOf("shard-eu", "system:masters"), nil)
	badSignature.Signature[len(badSignature.Signature)-1] ^= 0xff
	mustStaple := csrOf(t, serving("eu", "x.eu.kcp.example.com"), nil)
	mustStaple = rawCSR(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "eu"}, DNSNames: mustStaple.DNSNames,
		ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 1, 24}, Value: []byte{0x30, 0x03, 0x02, 0x01, 0x05}}}}, newKey(t))

	// A SAN extension of one otherName (a UPN), which crypto/x509 skips.
	upn, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true,
		Bytes: append(must(asn1.Marshal(asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 20, 2, 3})),
			must(asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true,
				Bytes: must(asn1.MarshalWithParams("admin@example.com", "utf8"))}))...)})
	require.NoError(t, err)
	otherName := rawCSR(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}, ExtraExtensions: []pkix.Extension{
		{Id: asn1.ObjectIdentifier{2, 5, 29, 17}, Value: must(asn1.Marshal(asn1.RawValue{Tag: asn1.TagSequence, IsCompound: true, Bytes: upn}))}}}, newKey(t))
	require.Empty(t, otherName.DNSNames, "crypto/x509 reads no name of it")

	for _, tc := range []struct {
		name string
		csr  *x509.CertificateRequest
		kind ConsumerKind
		role pki.CA
		// role is the Issued's role it matches; empty when refused.
		issued string
	}{
		{name: "a Shard's serving certificate within the dnsNames", kind: Shard, role: pki.ServerCA, issued: "server",
			csr: csrOf(t, serving("eu", "x.eu.kcp.example.com", "shard.eu.example.com", "localhost"), nil)},
		{name: "the declared wildcard itself", kind: Shard, role: pki.ServerCA, issued: "server",
			csr: csrOf(t, serving("eu", "*.eu.kcp.example.com"), nil)},
		{name: "a Shard's client certificate: system:masters from the client CA", kind: Shard, role: pki.ClientCA, issued: "client",
			csr: csrOf(t, clientOf("shard-eu", "system:masters"), nil)},
		{name: "the logical-cluster-admin", kind: Shard, role: pki.ClientCA, issued: "logical-cluster-admin",
			csr: csrOf(t, clientOf("logical-cluster-admin", "system:kcp:logical-cluster-admin"), nil)},
		{name: "a managed etcd's serving certificate on 127.0.0.1", kind: Shard, role: pki.EtcdClientCA, issued: "etcd-server",
			csr: csrOf(t, with(serving("eu-shard-etcd", "localhost"), func(s *cmv1.CertificateSpec) {
				s.IPAddresses, s.Usages = []string{"127.0.0.1"}, pki.PeerAuth.KeyUsages()
			}), nil)},
		{name: "a template's organizational unit", kind: Shard, role: pki.ClientCA, issued: "client",
			csr: csrOf(t, with(clientOf("shard-eu", "system:masters"), func(s *cmv1.CertificateSpec) { s.Subject.OrganizationalUnits = []string{"eu"} }), nil)},
		{name: "a FrontProxy's request-header identity", kind: FrontProxy, role: pki.RequestHeaderClientCA, issued: "requestheader",
			csr: csrOf(t, clientOf("kcp-front-proxy"), nil)},
		{name: "a Kubeconfig's user and groups", kind: Kubeconfig, role: pki.FrontProxyClientCA, issued: "kubeconfig",
			csr: csrOf(t, clientOf("alice", "team-a:developers"), nil)},
		{name: "the cache-client", kind: CacheClient, role: CacheServerCA, issued: "client",
			csr: csrOf(t, clientOf("cache-client", "system:masters"), nil)},
		{name: "RSA 2048", kind: Kubeconfig, role: pki.FrontProxyClientCA, issued: "kubeconfig",
			csr: rawCSR(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, rsaKey(2048))},
		{name: "P-384", kind: Kubeconfig, role: pki.FrontProxyClientCA, issued: "kubeconfig",
			csr: rawCSR(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, ecKey(elliptic.P384()))},
		{name: "basic constraints of a leaf", kind: Kubeconfig, role: pki.FrontProxyClientCA, issued: "kubeconfig",
			csr: csrOf(t, clientOf("alice"), nil, withBasicConstraints(false))},

		{name: "system:masters from the server CA", kind: Shard, role: pki.ServerCA,
			csr: csrOf(t, with(serving("eu", "x.eu.kcp.example.com"), func(s *cmv1.CertificateSpec) {
				s.Subject = &cmv1.X509Subject{Organizations: []string{"system:masters"}}
			}), nil)},
		{name: "a DNS SAN outside the dnsNames", kind: Shard, role: pki.ServerCA,
			csr: csrOf(t, serving("eu", "x.eu.kcp.example.com", "root-kcp.a.svc"), nil)},
		{name: "two labels below the wildcard", kind: Shard, role: pki.ServerCA, csr: csrOf(t, serving("eu", "a.b.eu.kcp.example.com"), nil)},
		{name: "a wildcard above the declared one", kind: Shard, role: pki.ServerCA, csr: csrOf(t, serving("eu", "*.kcp.example.com"), nil)},
		{name: "a FrontProxy's localhost, which its builder does not put", kind: FrontProxy, role: pki.ServerCA,
			csr: csrOf(t, serving("edge", "localhost"), nil)},
		{name: "an IP SAN", kind: Shard, role: pki.ServerCA,
			csr: csrOf(t, with(serving("eu", "x.eu.kcp.example.com"), func(s *cmv1.CertificateSpec) { s.IPAddresses = []string{"10.0.0.1"} }), nil)},
		{name: "an IP SAN other than the etcd's", kind: Shard, role: pki.EtcdClientCA,
			csr: csrOf(t, with(serving("eu-shard-etcd"), func(s *cmv1.CertificateSpec) {
				s.IPAddresses, s.Usages = []string{"10.0.0.1"}, pki.PeerAuth.KeyUsages()
			}), nil)},
		{name: "a URI SAN", kind: Shard, role: pki.ServerCA,
			csr: csrOf(t, with(serving("eu", "x.eu.kcp.example.com"), func(s *cmv1.CertificateSpec) { s.URIs = []string{URI("a", "eu-1", "u")} }), nil)},
		{name: "an e-mail SAN", kind: Kubeconfig, role: pki.FrontProxyClientCA,
			csr: csrOf(t, with(clientOf("alice"), func(s *cmv1.CertificateSpec) { s.EmailAddresses = []string{"alice@example.com"} }), nil)},
		{name: "a DNS SAN in a client certificate", kind: Shard, role: pki.ClientCA,
			csr: csrOf(t, with(clientOf("shard-eu", "system:masters"), func(s *cmv1.CertificateSpec) { s.DNSNames = []string{"x.eu.kcp.example.com"} }), nil)},
		{name: "a group more", kind: Shard, role: pki.ClientCA, csr: csrOf(t, clientOf("shard-eu", "system:masters", "extra"), nil)},
		{name: "a group less", kind: Shard, role: pki.ClientCA, csr: csrOf(t, clientOf("shard-eu"), nil)},
		{name: "not a name after the prefix", kind: Shard, role: pki.ClientCA, csr: csrOf(t, clientOf("shard-", "system:masters"), nil)},
		{name: "not a DNS-1123 name", kind: Shard, role: pki.ClientCA, csr: csrOf(t, clientOf("shard-Eu_1", "system:masters"), nil)},
		{name: "a Shard's subject from a FrontProxy", kind: FrontProxy, role: pki.ClientCA, csr: csrOf(t, clientOf("shard-eu", "system:masters"), nil)},
		{name: "a Kubeconfig asking system:masters", kind: Kubeconfig, role: pki.FrontProxyClientCA,
			csr: csrOf(t, clientOf("alice", "system:masters"), nil)},
		{name: "a Kubeconfig asking a kcp system group", kind: Kubeconfig, role: pki.FrontProxyClientCA,
			csr: csrOf(t, clientOf("alice", "system:kcp:logical-cluster-admin"), nil)},
		{name: "a Kubeconfig of a system user", kind: Kubeconfig, role: pki.FrontProxyClientCA, csr: csrOf(t, clientOf("system:admin"), nil)},
		{name: "a Kubeconfig asking the group of a home Kubeconfig's bindings", kind: Kubeconfig, role: pki.FrontProxyClientCA,
			csr: csrOf(t, clientOf("alice", "kubeconfig:a:admin"), nil)},
		{name: "a Kubeconfig from the client CA", kind: Kubeconfig, role: pki.ClientCA, csr: csrOf(t, clientOf("alice"), nil)},
		{name: "another cache client", kind: CacheClient, role: CacheServerCA, csr: csrOf(t, clientOf("cache-admin", "system:masters"), nil)},
		{name: "client auth in a serving certificate", kind: Shard, role: pki.ServerCA,
			csr: csrOf(t, with(serving("eu", "x.eu.kcp.example.com"), func(s *cmv1.CertificateSpec) { s.Usages = pki.PeerAuth.KeyUsages() }), nil)},
		{name: "server auth in a client certificate", kind: Shard, role: pki.ClientCA,
			csr: csrOf(t, with(clientOf("shard-eu", "system:masters"), func(s *cmv1.CertificateSpec) { s.Usages = pki.PeerAuth.KeyUsages() }), nil)},
		{name: "cert sign", kind: Kubeconfig, role: pki.FrontProxyClientCA,
			csr: csrOf(t, with(clientOf("alice"), func(s *cmv1.CertificateSpec) { s.Usages = append(s.Usages, cmv1.UsageCertSign) }), nil)},
		{name: "a CA", kind: Kubeconfig, role: pki.FrontProxyClientCA,
			csr: csrOf(t, clientOf("alice"), nil, withBasicConstraints(true))},
		{name: "an extension no certificate carries", kind: Shard, role: pki.ServerCA, csr: mustStaple},
		{name: "an e-mail in the subject", kind: Kubeconfig, role: pki.FrontProxyClientCA,
			csr: rawCSR(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice",
				ExtraNames: []pkix.AttributeTypeAndValue{{Type: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}, Value: "alice@example.com"}}}}, newKey(t))},
		{name: "two common names", kind: Kubeconfig, role: pki.FrontProxyClientCA,
			csr: rawCSR(t, &x509.CertificateRequest{Subject: pkix.Name{ExtraNames: []pkix.AttributeTypeAndValue{
				{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "system:admin"}, {Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "alice"}}}}, newKey(t))},
		{name: "an otherName SAN", kind: Kubeconfig, role: pki.FrontProxyClientCA, csr: otherName},
		{name: "RSA 1024", kind: Kubeconfig, role: pki.FrontProxyClientCA,
			csr: rawCSR(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, rsaKey(1024))},
		{name: "P-224", kind: Kubeconfig, role: pki.FrontProxyClientCA,
			csr: rawCSR(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, ecKey(elliptic.P224()))},
		{name: "Ed25519", kind: Kubeconfig, role: pki.FrontProxyClientCA,
			csr: rawCSR(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, edKey)},
		{name: "a signature that does not verify", kind: Shard, role: pki.ClientCA, csr: badSignature},
		{name: "no CSR", kind: Shard, role: pki.ClientCA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			issued, err := Match(tc.csr, tc.kind, tc.role, d)
			if tc.issued == "" {
				require.Error(t, err)
				assert.Error(t, CheckCSR(tc.csr, tc.kind, tc.role, d))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.issued, issued.Role)
			assert.NoError(t, CheckCSR(tc.csr, tc.kind, tc.role, d))
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestWithinDNSName(t *testing.T) {
	for _, tc := range []struct {
		name, declared string
		within         bool
	}{
		{"shard.eu.example.com", "shard.eu.example.com", true},
		{"Shard.EU.example.com", "shard.eu.example.com", true},
		{"a.eu.example.com", "*.eu.example.com", true},
		{"*.eu.example.com", "*.eu.example.com", true},
		{"eu.example.com", "*.eu.example.com", false},
		{"a.b.eu.example.com", "*.eu.example.com", false},
		{".eu.example.com", "*.eu.example.com", false},
		{"*.example.com", "*.eu.example.com", false},
		{"a.eu.example.com", "eu.example.com", false},
		{"a.eu.example.com.evil.com", "*.eu.example.com", false},
	} {
		assert.Equal(t, tc.within, WithinDNSName(tc.name, tc.declared), "%s within %s", tc.name, tc.declared)
	}
}

// TestForConsumer: the consumer's name stands for NamePlaceholder, and for nothing else.
func TestForConsumer(t *testing.T) {
	server := Issued{CommonName: NamePlaceholder}
	etcd := Issued{CommonName: NamePlaceholder + "-shard-etcd"}
	for _, tc := range []struct {
		name   string
		issued Issued
		cn     string
		of     string
		want   bool
	}{
		{"its own server certificate", server, "shard-1", "shard-1", true},
		{"another's server certificate", server, "shard-2", "shard-1", false},
		{"its own etcd certificate", etcd, "shard-1-shard-etcd", "shard-1", true},
		{"another's etcd certificate", etcd, "shard-2-shard-etcd", "shard-1", false},
		{"no consumer named", server, "shard-1", "", false},
		{"a fixed common name is any consumer's", Issued{CommonName: "logical-cluster-admin"}, "logical-cluster-admin", "shard-1", true},
		{"a user's is any consumer's", Issued{User: true}, "lena", "kc-1", true},
	} {
		assert.Equal(t, tc.want, tc.issued.ForConsumer(tc.cn, tc.of), tc.name)
	}
}
