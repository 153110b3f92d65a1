package home

import (
	"bufio"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

const forbidden = `{"reason":"Forbidden"}`

// TestSignSignsWhatThePolicyAllows checks POST /v1/sign/{kind}/{role}: a CSR the policy
// allows goes to the Issuer of the RootShard's CA of the role, with the policy's usages and
// a bounded duration, and the chain comes back; one it does not allow is a bare 403, a
// Warning Event on the Link that names the policy's error, and nothing is signed.
func TestSignSignsWhatThePolicyAllows(t *testing.T) {
	f := newFixture(t)
	f.start(nil)
	status, body := f.post(f.client, "/v1/sign/Shard/server", link.SignRequest{
		Consumer: link.ConsumerRef{Namespace: "remote", Name: "shard-1", UID: "u"},
		Request:  csr(t, "shard-1", nil, []string{"shard-1.eu.example.com", "localhost"}),
		Duration: metav1.Duration{Duration: 10 * 365 * 24 * time.Hour},
	})
	require.Equal(t, http.StatusOK, status, body)
	var resp link.SignResponse
	require.NoError(t, json.Unmarshal([]byte(body), &resp))
	assert.Equal(t, link.SignResponse{Certificate: []byte("chain"), CA: []byte("ca")}, resp)
	signed := f.signer.signings()
	require.Len(t, signed, 1)
	assert.Equal(t, "root-server-ca", signed[0].Issuer)
	assert.Equal(t, pki.ServerAuth.KeyUsages(), signed[0].Usages)
	assert.Equal(t, pki.LeafDuration.Duration, signed[0].Duration, "a longer duration is bounded to a leaf's")
	assert.Equal(t, "link-uid", signed[0].Link.UID)
	assert.Empty(t, f.events())

	for _, tc := range []struct {
		name, path string
		request    []byte
		detail     string
	}{
		{"system:masters from the server CA", "/v1/sign/Shard/server", csr(t, "shard-1", []string{"system:masters"}, nil), "subject"},
		{"a DNS SAN outside the Link's dnsNames", "/v1/sign/Shard/server", csr(t, "shard-1", nil, []string{"shard-1.us.example.com"}), "shard-1.us.example.com"},
		{"a DNS SAN in a client certificate", "/v1/sign/Shard/client", csr(t, "shard-shard-1", []string{"system:masters"}, []string{"x.eu.example.com"}), "DNS"},
		{"no CSR", "/v1/sign/Shard/server", []byte("not a CSR"), "no PEM CERTIFICATE REQUEST"},
		{"another consumer's server certificate", "/v1/sign/Shard/server", csr(t, "shard-2", nil, []string{"localhost"}), `CN="shard-2" is not the server certificate of the Shard "shard-1"`},
		{"another consumer's client certificate", "/v1/sign/Shard/client", csr(t, "shard-shard-2", []string{"system:masters"}, nil), `of the Shard "shard-1"`},
	} {
		status, body := f.post(f.client, tc.path, link.SignRequest{Consumer: link.ConsumerRef{Namespace: "remote", Name: "shard-1", UID: "u"},
			Request: tc.request})
		assert.Equal(t, http.StatusForbidden, status, tc.name)
		assert.Equal(t, forbidden, body, tc.name)
		events := f.events()
		if assert.Len(t, events, 1, tc.name) {
			assert.True(t, strings.HasPrefix(events[0], "Warning "+string(CSRNotAllowed)+" "), events[0])
			assert.Contains(t, events[0], tc.detail, tc.name)
		}
	}
	assert.Len(t, f.signer.signings(), 1, "nothing refused is signed")
}

// TestSignAnswersWhatTheSignerSays checks the answers of a signature the Signer did not
// give: denied is a 403 and a Warning Event, not in time a 503 with Retry-After, any other
// failure a 500.
func TestSignAnswersWhatTheSignerSays(t *testing.T) {
	f := newFixture(t)
	f.start(nil)
	request := link.SignRequest{Consumer: link.ConsumerRef{Namespace: "remote", Name: "shard-1", UID: "u"}, Request: csr(t, "shard-shard-1", []string{"system:masters"}, nil)}

	f.signer.err = fmt.Errorf("%w: the CertificateRequest a/x is Denied", ErrDenied)
	status, body := f.post(f.client, "/v1/sign/Shard/client", request)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, forbidden, body)
	events := f.events()
	require.Len(t, events, 1)
	assert.True(t, strings.HasPrefix(events[0], "Warning "+string(SigningDenied)+" "), events[0])

	f.signer.err = fmt.Errorf("%w: after 30s", ErrNotSignedYet)
	resp, err := f.dial(f.client, f.serverName).Post(f.url+"/v1/sign/Shard/client", "application/json", strings.NewReader(mustJSON(t, request)))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "10", resp.Header.Get("Retry-After"))

	f.signer.err = fmt.Errorf("the host is down")
	status, _ = f.post(f.client, "/v1/sign/Shard/client", request)
	assert.Equal(t, http.StatusInternalServerError, status)
	assert.Empty(t, f.events())
	assert.Equal(t, "root-client-ca", f.signer.signings()[0].Issuer)
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestRenewSignsTheLinksOwnCertificateByTheLinkCA checks POST /v1/renew: the Link's own
// client certificate again is signed by the link CA's Issuer; another subject is refused.
func TestRenewSignsTheLinksOwnCertificateByTheLinkCA(t *testing.T) {
	f := newFixture(t)
	f.start(nil)
	uri := link.URI("a", "eu-1", "link-uid")
	status, body := f.post(f.client, link.RenewPath, link.SignRequest{Request: csr(t, identity, nil, []string{identity}, uri)})
	require.Equal(t, http.StatusOK, status, body)
	signed := f.signer.signings()
	require.Len(t, signed, 1)
	assert.Equal(t, "root-link-ca", signed[0].Issuer)
	assert.Equal(t, pki.ClientAuth.KeyUsages(), signed[0].Usages)
	assert.Zero(t, signed[0].Duration)

	status, body = f.post(f.client, link.RenewPath, link.SignRequest{Request: csr(t, "us-1.links.example.com", nil, []string{"us-1.links.example.com"}, uri)})
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, forbidden, body)
	assert.Len(t, f.signer.signings(), 1)
	events := f.events()
	require.Len(t, events, 1)
	assert.True(t, strings.HasPrefix(events[0], "Warning "+string(CSRNotAllowed)+" "), events[0])
}

// TestRefusalsGoToTheLinkOnlyWhenProven checks that a refusal of the checks is a bare 403,
// an Event on the Link only when the certificate is of the Link's RootShard's link CA, and
// nothing signed.
func TestRefusalsGoToTheLinkOnlyWhenProven(t *testing.T) {
	f := newFixture(t)
	f.start(nil)
	request := link.SignRequest{Request: csr(t, "shard-1", nil, nil)}
	status, body := f.post(f.stranger, "/v1/sign/Shard/server", request)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, forbidden, body)
	assert.Empty(t, f.events(), "a stranger makes no Event on the Link")

	other := f.ca.issue(t, identity, []string{identity}, []string{link.URI("a", "eu-1", "old-uid")}, x509.ExtKeyUsageClientAuth)
	status, _ = f.post(other, "/v1/sign/Shard/server", request)
	assert.Equal(t, http.StatusForbidden, status)
	events := f.events()
	require.Len(t, events, 1)
	assert.True(t, strings.HasPrefix(events[0], "Warning "+string(link.DeclarationMismatch)+" "), events[0])

	status, _ = f.post(f.client, "/v1/sign/FrontProxy/server", request)
	assert.Equal(t, http.StatusForbidden, status)
	events = f.events()
	require.Len(t, events, 1)
	assert.True(t, strings.HasPrefix(events[0], "Warning "+string(link.ConsumerKindNotAllowed)+" "), events[0])
	assert.Empty(t, f.signer.signings())
}

// TestTrustAndServingAreTheRootShardsOwn checks that a link CA or a serving certificate
// Secret that does not carry the RootShard's UID is neither trusted nor served, and that an
// unknown server name gets no certificate.
func TestTrustAndServingAreTheRootShardsOwn(t *testing.T) {
	f := newFixture(t)
	f.start(nil)
	_, err := f.dial(f.client, "other.a"+".link.kcp-setups.local").Get(f.url + link.BundlesPath)
	require.Error(t, err, "an unknown server name")

	f.rs.UID = "another-uid"
	require.NoError(t, f.rootShards.Update(f.rs))
	_, err = f.dial(f.client, f.serverName).Get(f.url + link.BundlesPath)
	require.Error(t, err, "the serving certificate of another RootShard's UID")
	trust := f.server.trust()
	assert.Empty(t, trust, "the link CA of another RootShard's UID")
}

// TestBundlesStream checks GET /v1/bundles: the Bundles first, with the keyless shard-join
// data and the link CA, new Bundles after a change, Heartbeats while nothing changes, and the
// end of the stream once the Link is deleting.
func TestBundlesStream(t *testing.T) {
	f := newFixture(t)
	f.heartbeat = 100 * time.Millisecond
	f.start(nil)
	resp, err := f.dial(f.client, f.serverName).Get(f.url + link.BundlesPath)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	lines := bufio.NewScanner(resp.Body)
	next := func() link.StreamMessage {
		t.Helper()
		require.True(t, lines.Scan(), "the stream ended: %v", lines.Err())
		var m link.StreamMessage
		require.NoError(t, json.Unmarshal(lines.Bytes(), &m))
		return m
	}
	first := next()
	require.Equal(t, link.BundlesMessage, first.Type)
	assert.Equal(t, map[link.ConsumerKind]map[string][]byte{link.Shard: {"server-ca.crt": []byte("server CA"), reference.RootShardURLKey: []byte("https://root")}},
		first.Bundles.References, "the Shard's keyless shard-join, and no other kind")
	assert.Equal(t, f.ca.pem(), first.Bundles.LinkCA)
	assert.NotEmpty(t, first.Bundles.Revision)
	assert.Equal(t, link.HeartbeatMessage, next().Type)

	f.putSecret(reference.ShardJoin.Name("root"), string(reference.ShardJoin), reference.ShardJoin.Type(), map[string][]byte{
		"server-ca.crt": []byte("server CA, renewed"), "server-ca.key": []byte("never sent"), reference.RootShardURLKey: []byte("https://root")})
	f.changed(f.rs)
	m := next()
	for m.Type == link.HeartbeatMessage {
		m = next()
	}
	require.Equal(t, link.BundlesMessage, m.Type)
	assert.Equal(t, []byte("server CA, renewed"), m.Bundles.References[link.Shard]["server-ca.crt"])
	assert.NotEqual(t, first.Bundles.Revision, m.Bundles.Revision)

	deleting := f.link.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	require.NoError(t, f.links.Update(deleting))
	f.changed(deleting)
	for lines.Scan() {
		var m link.StreamMessage
		require.NoError(t, json.Unmarshal(lines.Bytes(), &m))
		assert.Equal(t, link.HeartbeatMessage, m.Type, "no Bundles once the Link is deleting")
	}
}

// TestEventsRoute checks that POST /v1/events/{kind} goes to Config.Events when there is
// one, behind the checks, and is a 404 without.
func TestEventsRoute(t *testing.T) {
	f := newFixture(t)
	f.start(nil)
	status, _ := f.post(f.client, "/v1/events/Shard", link.Event{})
	assert.Equal(t, http.StatusNotFound, status)

	f = newFixture(t)
	var got []link.Authorized
	f.start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, _ := link.AuthorizedFrom(r.Context())
		got = append(got, a)
		w.WriteHeader(http.StatusNoContent)
	}))
	status, _ = f.post(f.client, "/v1/events/Shard", link.Event{})
	assert.Equal(t, http.StatusNoContent, status)
	require.Len(t, got, 1)
	assert.Equal(t, "eu-1", got[0].Declaration.Name)
	status, _ = f.post(f.client, "/v1/events/FrontProxy", link.Event{})
	assert.Equal(t, http.StatusForbidden, status)
	assert.Len(t, got, 1)
}

// TestDeclaration checks that a Link becomes the declaration the checks read.
func TestDeclaration(t *testing.T) {
	now := metav1.Now()
	l := &operatorv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "eu-1", UID: "u", DeletionTimestamp: &now},
		Spec: operatorv1alpha1.LinkSpec{RootShardRef: corev1LocalRef("root"), Identity: identity, DNSNames: []string{"*.eu"},
			Consumers:      []operatorv1alpha1.LinkConsumerKind{operatorv1alpha1.LinkConsumerShard, operatorv1alpha1.LinkConsumerKubeconfig},
			CacheServerRef: ptrLocalRef("cache")}}
	assert.Equal(t, link.Declaration{Namespace: "a", Name: "eu-1", UID: "u", RootShard: "root", Identity: identity,
		Consumers: []link.ConsumerKind{link.Shard, link.Kubeconfig}, CacheServer: "cache", DNSNames: []string{"*.eu"}, Deleting: true}, Declaration(l))
}

// TestBoundDuration checks the validity a remote may ask.
func TestBoundDuration(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{0: 0, -time.Hour: 0, time.Minute: time.Hour, 48 * time.Hour: 48 * time.Hour,
		10 * 365 * 24 * time.Hour: pki.LeafDuration.Duration} {
		assert.Equal(t, want, boundDuration(in), in)
	}
}

// TestADeletedLinksLimitsAreForgotten checks that the deletion of a Link, as the server's
// cache tells it, drops its state in the limiter.
func TestADeletedLinksLimitsAreForgotten(t *testing.T) {
	f := newFixture(t)
	f.start(nil)
	for range link.DefaultLimits.MaxStreams {
		_, ok := f.server.limiter.OpenStream(string(f.link.UID))
		require.True(t, ok)
	}
	_, ok := f.server.limiter.OpenStream(string(f.link.UID))
	require.False(t, ok, "the Link holds every stream")
	f.server.EventHandler().OnDelete(f.link)
	_, ok = f.server.limiter.OpenStream(string(f.link.UID))
	assert.True(t, ok, "a deleted Link's streams are forgotten")
}

// TestIssuerOf checks which Issuer signs for a consumer kind and CA role: the RootShard's CA
// of the role, and a cache client's CacheServer's CA.
func TestIssuerOf(t *testing.T) {
	d := link.Declaration{RootShard: "root", CacheServer: "cache"}
	assert.Equal(t, "root-server-ca", issuerOf(d, link.Shard, pki.ServerCA))
	assert.Equal(t, "root-front-proxy-client-ca", issuerOf(d, link.Kubeconfig, pki.FrontProxyClientCA))
	assert.Equal(t, "cache-ca", issuerOf(d, link.CacheClient, link.CacheServerCA))
}

// TestRequestsAreAuthorizedAgainstTheCachesLatest: what the listener authorizes by is built
// again on each change its caches tell: a Link being deleted is refused from the next
// request on, and a link CA replaced no longer trusts the certificates of the one before.
func TestRequestsAreAuthorizedAgainstTheCachesLatest(t *testing.T) {
	f := newFixture(t)
	f.start(nil)
	sign := func() int {
		status, _ := f.post(f.client, "/v1/sign/Shard/server", link.SignRequest{Consumer: link.ConsumerRef{Namespace: "remote", Name: "shard-1", UID: "u"},
			Request: csr(t, "shard-1", nil, []string{"localhost"})})
		return status
	}
	require.Equal(t, http.StatusOK, sign())

	f.putSecret(linkpki.CAName(f.rs), "link-ca", "", map[string][]byte{corev1.TLSCertKey: newCA(t, "root-link-ca-2").pem()})
	f.changed(f.rs)
	assert.Equal(t, http.StatusForbidden, sign(), "the link CA replaced")
	f.putSecret(linkpki.CAName(f.rs), "link-ca", "", map[string][]byte{corev1.TLSCertKey: f.ca.pem()})
	f.changed(f.rs)
	require.Equal(t, http.StatusOK, sign(), "the link CA back")

	deleting := f.link.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	require.NoError(t, f.links.Update(deleting))
	f.changed(deleting)
	assert.Equal(t, http.StatusForbidden, sign(), "the Link being deleted")
	events := f.events()
	require.NotEmpty(t, events)
	assert.True(t, strings.HasPrefix(events[len(events)-1], "Warning "+string(link.DeclarationDeleting)+" "), events[len(events)-1])
}
