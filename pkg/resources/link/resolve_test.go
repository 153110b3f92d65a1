package link

import (
	"crypto/x509"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/reference/referencetest"
)

// bootstrapOf is the bootstrap Secret the builder makes of client and trust, copied into the
// remote's namespace b as a user carries it.
func bootstrapOf(t *testing.T, client reference.KeyPair, trust []byte) *corev1.Secret {
	t.Helper()
	built, err := Bootstrap(testDeclaration(), client, trust)
	require.NoError(t, err)
	return referencetest.Copy(built, "b")
}

func TestResolveBootstrap(t *testing.T) {
	ca := newCA(t, "root-link-ca")
	s := bootstrapOf(t, ca.issue(t, leafOpts{}), ca.PEM)
	s.Data["sync.example.com-checksum"] = []byte("an extra key is no reason to refuse a copy")
	got, err := ResolveBootstrap(s, time.Now())
	require.NoError(t, err)
	assert.Equal(t, "https://links.example.com:8443", got.ListenerURL.String())
	assert.Equal(t, "root.team-a.link.kcp-setups.local", got.ServerName)
	assert.Equal(t, "eu-1.links.example.com", got.Identity)
	assert.Equal(t, Ref{Namespace: "team-a", Name: "eu-1", UID: "6d1f0c2e-uid"}, got.Link)
	require.Len(t, got.Trust.Certs, 1)
	assert.True(t, got.Trust.Certs[0].Equal(ca.Cert))
	assert.Equal(t, s.Data["ca.crt"], got.Trust.PEM)
	assert.Equal(t, s.Data["tls.crt"], got.Client.PEM.Cert, "as received, chain included")
	assert.Equal(t, s.Data["tls.key"], got.Client.PEM.Key)
}

// While the link CA rotates, ca.crt holds both slots and a client certificate of either is
// good; once the old slot is dropped, its certificates are not.
func TestResolveBootstrapAcrossARotation(t *testing.T) {
	old, next := newCA(t, "root-link-ca"), newCA(t, "root-link-ca-next")
	both := certificates.Bundle(old.PEM, next.PEM)
	for _, tc := range []struct {
		name   string
		signer testCA
		trust  []byte
		ok     bool
	}{
		{"old slot, both trusted", old, both, true},
		{"new slot, both trusted", next, both, true},
		{"new slot alone", next, next.PEM, true},
		{"old slot, dropped", old, next.PEM, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ResolveBootstrap(bootstrapOf(t, tc.signer.issue(t, leafOpts{}), tc.trust), time.Now())
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrNotTrusted)
			}
		})
	}
}

// requireInvalid checks that err is a ReferenceSecretInvalid *reference.Error of cause about
// s that says want, and that it quotes none of s's content.
func requireInvalid(t *testing.T, err error, s *corev1.Secret, cause error, want string) {
	t.Helper()
	var e *reference.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, operatorv1alpha1.ReasonReferenceSecretInvalid, e.Reason)
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, "Secret b/eu-1-link-bootstrap "+want, e.Message)
	assert.NotContains(t, e.Message, "-----")
	for k, v := range s.Data {
		for _, line := range strings.Split(string(v), "\n") {
			if len(line) >= 16 {
				assert.NotContains(t, e.Message, line, "the message quotes %s", k)
			}
		}
	}
}

// One case per refusal.
func TestResolveBootstrapRefuses(t *testing.T) {
	now := time.Now()
	ca, foreign := newCA(t, "root-link-ca"), newCA(t, "another-ca")
	good := ca.issue(t, leafOpts{})
	other := ca.issue(t, leafOpts{})
	// An intermediate CA below the link CA, and a leaf of it: the link CA signs its leaves
	// itself, so a chain through another CA is not a link's.
	sub := ca.issue(t, leafOpts{isCA: true, usages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	subCA, err := credentials.ParseCA(sub.Cert, sub.Key)
	require.NoError(t, err)
	viaSub := testCA{PEM: sub.Cert, CA: subCA}.issue(t, leafOpts{})

	type failure struct {
		name   string
		break_ func(s *corev1.Secret)
		cause  error
		want   string
	}
	var cases []failure
	for _, k := range BootstrapKeys {
		cases = append(cases,
			failure{"no " + k, func(s *corev1.Secret) { delete(s.Data, k) }, reference.ErrMissingKey, `has no key "` + k + `"`},
			failure{"empty " + k, func(s *corev1.Secret) { s.Data[k] = nil }, reference.ErrMissingKey, `has an empty key "` + k + `"`})
	}
	for _, typ := range []corev1.SecretType{reference.ShardJoin.Type(), corev1.SecretTypeOpaque, corev1.SecretTypeTLS, ""} {
		cases = append(cases, failure{"type " + string(typ), func(s *corev1.Secret) { s.Type = typ }, reference.ErrWrongType,
			`is of type "` + string(typ) + `", not "operator.kcp.io/link-bootstrap"`})
	}
	for _, bad := range []string{"http://links.example.com:8443", "links.example.com:8443", "https://", "https://user:pass@links.example.com"} {
		cases = append(cases, failure{"listener URL " + bad, func(s *corev1.Secret) { s.Data[ListenerURLKey] = []byte(bad) }, reference.ErrMalformed,
			`key "listener-url" holds no https URL`})
	}
	for _, bad := range []string{"Root.Team-A.link", "root..link", "root.team-a.link.kcp-setups.local.", string(good.Key)} {
		cases = append(cases, failure{"server name " + bad, func(s *corev1.Secret) { s.Data[ServerNameKey] = []byte(bad) }, reference.ErrMalformed,
			`key "server-name" holds no DNS name`})
	}
	cases = append(cases,
		failure{"a leaf alone in ca.crt", func(s *corev1.Secret) { s.Data[CACertKey] = other.Cert }, reference.ErrNotCA,
			`key "ca.crt" holds a certificate that is not a CA`},
		failure{"a leaf after the CA in ca.crt", func(s *corev1.Secret) { s.Data[CACertKey] = certificates.Bundle(ca.PEM, other.Cert) }, reference.ErrNotCA,
			`key "ca.crt": its certificate #2 is not a CA`},
		failure{"a private key in ca.crt", func(s *corev1.Secret) { s.Data[CACertKey] = append(s.Data[CACertKey], good.Key...) }, reference.ErrMalformed,
			`key "ca.crt" holds a PEM block of type "PRIVATE KEY" where only certificates belong`},
		failure{"text in tls.crt", func(s *corev1.Secret) { s.Data[ClientCertKey] = []byte("not a certificate, long enough") }, reference.ErrMalformed,
			`key "tls.crt" holds no PEM certificate`},
		failure{"no key in tls.key", func(s *corev1.Secret) { s.Data[ClientKeyKey] = []byte("not a key, long enough to be seen") }, reference.ErrMalformed,
			`key "tls.key" holds no private key that parses`},
		failure{"a mismatched pair", func(s *corev1.Secret) { s.Data[ClientKeyKey] = other.Key }, reference.ErrKeyMismatch,
			`key "tls.key" is not the private key of the certificate in "tls.crt"`},
		failure{"a client certificate of a foreign CA", func(s *corev1.Secret) {
			kp := foreign.issue(t, leafOpts{})
			s.Data[ClientCertKey], s.Data[ClientKeyKey] = kp.Cert, kp.Key
		}, ErrNotTrusted, `key "tls.crt" holds a certificate that no CA of "ca.crt" signed, valid at ` + now.UTC().Format(time.RFC3339)},
		failure{"a foreign CA in ca.crt", func(s *corev1.Secret) { s.Data[CACertKey] = foreign.PEM }, ErrNotTrusted,
			`key "tls.crt" holds a certificate that no CA of "ca.crt" signed, valid at ` + now.UTC().Format(time.RFC3339)},
		failure{"a client certificate of a CA below the link CA", func(s *corev1.Secret) { s.Data[ClientCertKey], s.Data[ClientKeyKey] = viaSub.Cert, viaSub.Key },
			ErrNotTrusted, `key "tls.crt" holds a certificate that no CA of "ca.crt" signed, valid at ` + now.UTC().Format(time.RFC3339)},
	)
	notLink := `key "tls.crt" holds no link client certificate (one for client auth only, not a CA, with one DNS SAN and one kcp-setups:link: URI SAN)`
	for name, o := range map[string]leafOpts{
		"a serving certificate":               {usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
		"a certificate for server and client": {usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
		"a CA":                                {isCA: true},
		"two DNS SANs":                        {dnsNames: []string{"eu-1.links.example.com", "eu-2.links.example.com"}},
		"no URI SAN":                          {uris: []string{}},
		"another URI SAN":                     {uris: []string{"spiffe://team-a/eu-1"}},
		"two URI SANs":                        {uris: []string{IdentityURI(testDeclaration()), "kcp-setups:link:team-a/eu-2/uid"}},
	} {
		cases = append(cases, failure{name, func(s *corev1.Secret) {
			kp := ca.issue(t, o)
			s.Data[ClientCertKey], s.Data[ClientKeyKey] = kp.Cert, kp.Key
		}, ErrNotLinkClient, notLink})
	}
	for name, o := range map[string]leafOpts{
		"an expired client certificate":      {notBefore: now.Add(-48 * time.Hour), notAfter: now.Add(-time.Hour)},
		"a client certificate not yet valid": {notBefore: now.Add(time.Hour), notAfter: now.Add(48 * time.Hour)},
	} {
		cases = append(cases, failure{name, func(s *corev1.Secret) {
			kp := ca.issue(t, o)
			s.Data[ClientCertKey], s.Data[ClientKeyKey] = kp.Cert, kp.Key
		}, ErrNotValidNow, `key "tls.crt" holds a certificate valid from ` + o.notBefore.UTC().Format(time.RFC3339) + ` until ` +
			o.notAfter.UTC().Format(time.RFC3339) + `, not at ` + now.UTC().Format(time.RFC3339)})
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := bootstrapOf(t, good, ca.PEM)
			c.break_(s)
			got, err := ResolveBootstrap(s, now)
			assert.Nil(t, got)
			requireInvalid(t, err, s, c.cause, c.want)
		})
	}
}

func TestResolveBootstrapNil(t *testing.T) {
	got, err := ResolveBootstrap(nil, time.Now())
	assert.Nil(t, got)
	require.Error(t, err)
}

// TestResolveLinkedBootstrap: the remote trusts the link CA bundle its stream delivered into
// the bundles Secret, which follows a rotation, and of the bootstrap's ca.crt only the CA
// that signed its client certificate: a bootstrap carried once before a rotation neither
// keeps the old link CA trusted after it, nor refuses a certificate renewed from the new one.
func TestResolveLinkedBootstrap(t *testing.T) {
	old, next := newCA(t, "root-link-ca"), newCA(t, "root-link-ca-next")
	both := certificates.Bundle(old.PEM, next.PEM)
	bundlesOf := func(s *corev1.Secret, linkCA []byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: BundlesName(s.Name), Namespace: s.Namespace,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: s.Name, UID: s.UID}}},
			Data: map[string][]byte{BundlesLinkCAKey: linkCA}}
	}
	for _, tc := range []struct {
		name         string
		carried      []byte
		signer       testCA
		received     []byte // nil: no bundles Secret
		foreignOwner bool
		trusted      []testCA
		refused      bool
	}{
		{name: "nothing received yet", carried: old.PEM, signer: old, trusted: []testCA{old}},
		{name: "the same CA received", carried: old.PEM, signer: old, received: old.PEM, trusted: []testCA{old}},
		{name: "a rotation started", carried: old.PEM, signer: old, received: both, trusted: []testCA{old, next}},
		{name: "renewed from the new CA while both are live", carried: old.PEM, signer: next, received: both, trusted: []testCA{old, next}},
		{name: "the old CA dropped", carried: old.PEM, signer: next, received: next.PEM, trusted: []testCA{next}},
		{name: "carried again from the new CA, the bundle not yet received again", carried: next.PEM, signer: next, received: old.PEM,
			trusted: []testCA{old, next}},
		{name: "renewed from the new CA, nothing received", carried: old.PEM, signer: next, refused: true},
		{name: "a bundles Secret of another bootstrap is not read", carried: old.PEM, signer: next, received: next.PEM, foreignOwner: true,
			refused: true},
		{name: "a received bundle that holds a leaf is not used", carried: old.PEM, signer: old,
			received: append(slices.Clone(next.PEM), old.issue(t, leafOpts{}).Cert...), trusted: []testCA{old}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := bootstrapOf(t, tc.signer.issue(t, leafOpts{}), tc.carried)
			s.UID = "uid-b"
			var bundles *corev1.Secret
			if tc.received != nil {
				bundles = bundlesOf(s, tc.received)
				if tc.foreignOwner {
					bundles.OwnerReferences[0].UID = "another"
				}
			}
			got, err := ResolveLinkedBootstrap(s, bundles, time.Now())
			if tc.refused {
				require.ErrorIs(t, err, ErrNotTrusted)
				return
			}
			require.NoError(t, err)
			var want, have []string
			for _, c := range tc.trusted {
				want = append(want, c.Cert.Subject.CommonName)
			}
			for _, c := range got.Trust.Certs {
				have = append(have, c.Subject.CommonName)
			}
			assert.Equal(t, want, have)
			fps, err := pki.Fingerprints(got.Trust.PEM)
			require.NoError(t, err)
			assert.Len(t, fps, len(want), "the PEM is the trust")
		})
	}
}
