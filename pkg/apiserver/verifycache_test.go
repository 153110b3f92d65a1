package apiserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"

	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
)

// testCA is a CA of a test, with its PEM certificate for a CA provider.
type testCA struct {
	*credentials.CA
	pem []byte
}

func newTestCA(t testing.TB, cn string) testCA {
	certPEM, keyPEM := credentialstest.NewCA(t, cn)
	ca, err := credentials.ParseCA(certPEM, keyPEM)
	require.NoError(t, err)
	return testCA{CA: ca, pem: certPEM}
}

// client is a client certificate of ca for cn in the groups, valid from a minute before
// now for lifetime.
func (ca testCA) client(t testing.TB, now time.Time, lifetime time.Duration, cn string, groups ...string) *x509.Certificate {
	minted, err := ca.Mint(pkix.Name{CommonName: cn, Organization: groups}, now, lifetime)
	require.NoError(t, err)
	return minted.Cert
}

// intermediate is a CA signed by ca, which only its client certificates' chains carry.
func (ca testCA) intermediate(t testing.TB, cn string) testCA {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return testCA{CA: &credentials.CA{Cert: cert, Key: key}, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func provider(t testing.TB, name string, pems ...[]byte) dynamiccertificates.CAContentProvider {
	var bundle []byte
	for _, p := range pems {
		bundle = append(bundle, p...)
	}
	p, err := dynamiccertificates.NewStaticCAContent(name, bundle)
	require.NoError(t, err)
	return p
}

// authenticators are the delegated authenticator of k8s.io/apiserver for the client CAs
// and, as an authenticating proxy's, the request-header CAs and allowed names (none: any
// name, as --requestheader-allowed-names is by default), and the server's, made of it
// with verifier.
func authenticators(t testing.TB, verifier *CertificateVerifier, clientCAs, proxyCAs dynamiccertificates.CAContentProvider, allowed ...string) (full, server authenticator.Request) {
	requestHeader := &authenticatorfactory.RequestHeaderConfig{
		UsernameHeaders:     headerrequest.StaticStringSlice{"X-Remote-User"},
		UIDHeaders:          headerrequest.StaticStringSlice{"X-Remote-Uid"},
		GroupHeaders:        headerrequest.StaticStringSlice{"X-Remote-Group"},
		ExtraHeaderPrefixes: headerrequest.StaticStringSlice{"X-Remote-Extra-"},
		CAContentProvider:   proxyCAs,
		AllowedClientNames:  headerrequest.StaticStringSlice(append([]string{}, allowed...)),
	}
	full, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                          &apiserver.AnonymousAuthConfig{Enabled: true},
		ClientCertificateCAContentProvider: clientCAs,
		RequestHeaderConfig:                requestHeader,
	}.New()
	require.NoError(t, err)
	return full, WithCertificateVerifier(full, verifier, clientCAs, requestHeader)
}

// outcome is what an authenticator answered, and what the request's headers were after.
type outcome struct {
	Response *authenticator.Response
	OK       bool
	Err      string
	Headers  http.Header
}

func authenticate(a authenticator.Request, peers []*x509.Certificate, headers http.Header) outcome {
	req := httptest.NewRequest(http.MethodGet, "/apis", nil)
	if peers != nil {
		req.TLS = &tls.ConnectionState{PeerCertificates: peers}
	}
	req.Header = headers.Clone()
	resp, ok, err := a.AuthenticateRequest(req)
	o := outcome{Response: resp, OK: ok, Headers: req.Header}
	if err != nil {
		// x509 names the time of the check, to the second: two checks a second apart say the
		// same otherwise.
		o.Err = verifiedAt.ReplaceAllString(err.Error(), "current time <now> is")
	}
	return o
}

// verifiedAt is the time x509 says it checked a certificate's validity at.
var verifiedAt = regexp.MustCompile(`current time \S+ is`)

// TestWithCertificateVerifierAnswersAsTheDelegatedAuthenticator compares the server's
// authenticator with the delegated one of k8s.io/apiserver, configured alike, request by
// request: the first call verifies, the second is answered from the cache, and both
// answer what the delegated authenticator answers, errors and cleared headers included.
func TestWithCertificateVerifierAnswersAsTheDelegatedAuthenticator(t *testing.T) {
	now := time.Now()
	clientCA, proxyCA, otherCA := newTestCA(t, "client-ca"), newTestCA(t, "front-proxy-ca"), newTestCA(t, "other-ca")
	intermediate := clientCA.intermediate(t, "client-intermediate")
	verifier := &CertificateVerifier{}
	full, server := authenticators(t, verifier, provider(t, "client-ca", clientCA.pem), provider(t, "front-proxy-ca", proxyCA.pem), "front-proxy-client")

	proxied := http.Header{"X-Remote-User": {"bob"}, "X-Remote-Group": {"team-a", "team-b"}, "X-Remote-Extra-Scopes": {"view"}, "Accept": {"application/json"}}
	proxy := proxyCA.client(t, now, time.Hour, "front-proxy-client")
	for _, tc := range []struct {
		name    string
		peers   []*x509.Certificate
		headers http.Header
		ok      bool
		// again is how many verifications the same request makes again, when it is
		// remembered: none for a proxy, one for a user's certificate (the request-header
		// CA's, which fails before the client CA's and, as a failure, is not remembered).
		again *int64
	}{
		{name: "a user's certificate", peers: []*x509.Certificate{clientCA.client(t, now, time.Hour, "alice", "team-a", "system:masters")}, ok: true, again: ptr[int64](1)},
		{name: "a user's certificate with its intermediate", peers: []*x509.Certificate{intermediate.client(t, now, time.Hour, "carol"), intermediate.Cert}, ok: true, again: ptr[int64](1)},
		{name: "an intermediate's certificate without the intermediate", peers: []*x509.Certificate{intermediate.client(t, now, time.Hour, "carol")}},
		{name: "an authenticating proxy", peers: []*x509.Certificate{proxy}, headers: proxied, ok: true, again: ptr[int64](0)},
		{name: "an authenticating proxy that names nobody", peers: []*x509.Certificate{proxy}, headers: http.Header{"Accept": {"application/json"}}},
		{name: "a proxy whose name is not allowed", peers: []*x509.Certificate{proxyCA.client(t, now, time.Hour, "intruder")}, headers: proxied},
		{name: "a user's certificate that names a user in headers too", peers: []*x509.Certificate{clientCA.client(t, now, time.Hour, "dave")}, headers: proxied, ok: true, again: ptr[int64](1)},
		{name: "a certificate of an unknown CA", peers: []*x509.Certificate{otherCA.client(t, now, time.Hour, "mallory", "system:masters")}},
		{name: "an expired certificate", peers: []*x509.Certificate{clientCA.client(t, now.Add(-2*time.Hour), time.Hour, "erin")}},
		{name: "no certificate", headers: proxied, ok: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := authenticate(full, tc.peers, tc.headers)
			require.Equal(t, tc.ok, want.OK, "the delegated authenticator: %+v", want)
			assert.Equal(t, want, authenticate(server, tc.peers, tc.headers), "the first request")
			before := verifier.verifications.Load()
			assert.Equal(t, want, authenticate(server, tc.peers, tc.headers), "the same request again")
			if tc.again != nil {
				assert.Equal(t, *tc.again, verifier.verifications.Load()-before, "answered from what was verified")
			}
		})
	}
}

// TestCertificateVerifierForgets checks what a remembered chain depends on: the time, the
// roots, and the bound on what it remembers; and that failures and options with a fixed
// time are verified every time.
func TestCertificateVerifierForgets(t *testing.T) {
	now := time.Now()
	clientCA, otherCA := newTestCA(t, "client-ca"), newTestCA(t, "other-ca")
	options := func(p dynamiccertificates.CAContentProvider) x509.VerifyOptions {
		opts, ok := p.VerifyOptions()
		require.True(t, ok)
		return opts
	}
	clientCAs := options(provider(t, "client-ca", clientCA.pem))
	clock := now
	verifier := &CertificateVerifier{Now: func() time.Time { return clock }, Max: 2}
	verify := func(opts x509.VerifyOptions, peers ...*x509.Certificate) (int64, error) {
		before := verifier.verifications.Load()
		_, err := verifier.Verify(peers, opts)
		return verifier.verifications.Load() - before, err
	}

	alice := clientCA.client(t, now, time.Hour, "alice")
	n, err := verify(clientCAs, alice)
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
	n, err = verify(clientCAs, alice)
	require.NoError(t, err)
	assert.EqualValues(t, 0, n, "remembered")

	clock = now.Add(2 * time.Hour)
	n, err = verify(clientCAs, alice)
	assert.ErrorContains(t, err, "expired", "past the certificate's NotAfter it is verified again, and fails")
	assert.EqualValues(t, 1, n)
	clock = now

	rotated := options(provider(t, "client-ca", otherCA.pem))
	n, err = verify(rotated, alice)
	assert.ErrorContains(t, err, "unknown authority", "a rotated CA bundle no longer trusts what it trusted")
	assert.EqualValues(t, 1, n)
	n, err = verify(rotated, alice)
	assert.Error(t, err)
	assert.EqualValues(t, 1, n, "a failure is not remembered")

	_, err = verifier.Verify(nil, clientCAs)
	assert.Error(t, err, "no certificate is no chain")

	fixed := clientCAs
	fixed.CurrentTime = now
	n, _ = verify(fixed, alice)
	assert.EqualValues(t, 1, n, "options with a time of their own are verified every time")

	for _, cn := range []string{"bob", "carol"} {
		_, err := verify(clientCAs, clientCA.client(t, now, time.Hour, cn))
		require.NoError(t, err)
	}
	n, err = verify(clientCAs, alice)
	require.NoError(t, err)
	assert.EqualValues(t, 1, n, "beyond Max, everything was forgotten")
}

func ptr[T any](v T) *T { return &v }

// FuzzWithCertificateVerifier holds the server's authenticator to the delegated one of
// k8s.io/apiserver for any request: a certificate chain of the fixture's (a user's, one
// through an intermediate, a proxy's, an unknown CA's, an expired one, none), any
// request headers, and any allowed proxy name. Each request is answered twice by the
// server's, so that the second answer comes from what the first verified.
func FuzzWithCertificateVerifier(f *testing.F) {
	now := time.Now()
	clientCA, proxyCA, otherCA := newTestCA(f, "client-ca"), newTestCA(f, "front-proxy-ca"), newTestCA(f, "other-ca")
	intermediate := clientCA.intermediate(f, "client-intermediate")
	chains := [][]*x509.Certificate{
		nil,
		{clientCA.client(f, now, time.Hour, "alice", "team-a")},
		{intermediate.client(f, now, time.Hour, "carol"), intermediate.Cert},
		{intermediate.client(f, now, time.Hour, "carol")},
		{proxyCA.client(f, now, time.Hour, "front-proxy-client")},
		{proxyCA.client(f, now, time.Hour, "intruder", "system:masters")},
		{otherCA.client(f, now, time.Hour, "mallory", "system:masters")},
		{clientCA.client(f, now.Add(-2*time.Hour), time.Hour, "erin")},
		{clientCA.client(f, now, time.Hour, "front-proxy-client")},
	}
	clientCAs := provider(f, "client-ca", clientCA.pem)
	proxyCAs := provider(f, "front-proxy-ca", proxyCA.pem)
	verifier := &CertificateVerifier{}

	f.Add(uint8(4), "bob", "team-a,team-b", "Scopes", "view", "front-proxy-client")
	f.Add(uint8(1), "bob", "", "", "", "")
	f.Add(uint8(5), "root", "system:masters", "", "", "front-proxy-client")
	f.Add(uint8(8), "", "", "", "", "")
	f.Fuzz(func(t *testing.T, which uint8, username, groups, extraKey, extraValue, allowed string) {
		var names []string
		if allowed != "" {
			names = append(names, allowed)
		}
		full, server := authenticators(t, verifier, clientCAs, proxyCAs, names...)

		headers := http.Header{}
		if username != "" {
			headers.Set("X-Remote-User", username)
		}
		for _, g := range strings.Split(groups, ",") {
			if g != "" {
				headers.Add("X-Remote-Group", g)
			}
		}
		if extraKey != "" {
			headers.Add("X-Remote-Extra-"+extraKey, extraValue)
		}
		peers := chains[int(which)%len(chains)]
		want := authenticate(full, peers, headers)
		require.Equal(t, want, authenticate(server, peers, headers), "the first request")
		require.Equal(t, want, authenticate(server, peers, headers), "the same request again")
	})
}
