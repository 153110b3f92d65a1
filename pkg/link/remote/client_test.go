package remote

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
)

// TestSign: a CSR for a consumer reaches the sign route of its kind and role through the
// listener's checks, over TLS 1.3 and HTTP/2, and the chain comes back.
func TestSign(t *testing.T) {
	var got link.SignRequest
	var authorized link.Authorized
	h := newHome(t, link.DefaultLimits, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, 2, r.ProtoMajor)
		assert.Equal(t, uint16(tls.VersionTLS13), r.TLS.Version)
		authorized, _ = link.AuthorizedFrom(r.Context())
		require.NoError(t, json.NewDecoder(r.Body).Decode(&got))
		writeJSON(w, link.SignResponse{Certificate: []byte("chain"), CA: []byte("ca")})
	}))
	c := h.client(t)
	consumer := link.ConsumerRef{Namespace: "remote", Name: "eu-shard", UID: "uid-shard"}
	out, err := c.Sign(context.Background(), link.Shard, pki.ServerCA, consumer, []byte("csr"), time.Hour)
	require.NoError(t, err)
	assert.Equal(t, link.SignResponse{Certificate: []byte("chain"), CA: []byte("ca")}, out)
	assert.Equal(t, link.Request{Operation: link.Sign, Kind: link.Shard, Role: pki.ServerCA}, authorized.Request)
	assert.Equal(t, testLink.UID, authorized.Declaration.UID)
	assert.Equal(t, consumer, got.Consumer)
	assert.Equal(t, []byte("csr"), got.Request)
	assert.Equal(t, time.Hour, got.Duration.Duration)
}

// TestRenew: the renewal's CSR is the one link.CheckRenewal wants, its key made here, and the
// new pair makes a bootstrap Secret that resolves.
func TestRenew(t *testing.T) {
	var h *home
	h = newHome(t, link.DefaultLimits, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, link.RenewPath, r.URL.Path)
		var req link.SignRequest
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		assert.Zero(t, req.Consumer)
		block, _ := pem.Decode(req.Request)
		require.NotNil(t, block)
		csr, err := x509.ParseCertificateRequest(block.Bytes)
		require.NoError(t, err)
		if err := link.CheckRenewal(csr, testLink); err != nil {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		tmpl := clientTemplate(t, time.Now().Add(-time.Minute), time.Now().Add(2*time.Hour))
		writeJSON(w, link.SignResponse{Certificate: h.ca.sign(t, tmpl, csr.PublicKey), CA: h.ca.pem})
	}))
	pair, err := h.client(t).Renew(context.Background())
	require.NoError(t, err)
	assert.NotEqual(t, h.clientKey, pair.Key)

	renewed := h.bootstrap()
	renewed.Data[linkpki.ClientCertKey], renewed.Data[linkpki.ClientKeyKey] = pair.Cert, pair.Key
	b, err := linkpki.ResolveBootstrap(renewed, time.Now())
	require.NoError(t, err)
	assert.True(t, b.Client.Cert.NotAfter.After(time.Now().Add(90*time.Minute)), "the new certificate, not the old one")
	// The new pair speaks to the listener too.
	c, err := NewClient(b)
	require.NoError(t, err)
	_, err = c.Renew(context.Background())
	require.NoError(t, err)
}

// TestErrorsKeepTheStatus: the home's refusal, its limits and an outage are told apart.
func TestErrorsKeepTheStatus(t *testing.T) {
	unavailable := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	for _, tc := range []struct {
		name       string
		limits     link.Limits
		call       func(*Client) error
		code       int
		refused    bool
		forbidden  bool
		retryAfter time.Duration
	}{
		{name: "a kind the Link does not admit: 403", limits: link.DefaultLimits, code: http.StatusForbidden, refused: true, forbidden: true,
			call: func(c *Client) error {
				_, err := c.Sign(context.Background(), link.FrontProxy, pki.ServerCA, link.ConsumerRef{}, []byte("csr"), 0)
				return err
			}},
		{name: "over the rate: 429 with Retry-After", limits: link.Limits{MaxStreams: 1, MaxBodyBytes: 1 << 10, RequestsPerSecond: 0.01, Burst: 1},
			code: http.StatusTooManyRequests, retryAfter: 100 * time.Second,
			call: func(c *Client) error {
				// The first takes the burst, and is answered by the handler (503).
				_ = c.Report(context.Background(), link.Event{ConsumerKey: link.ConsumerKey{Kind: link.Shard}})
				return c.Report(context.Background(), link.Event{ConsumerKey: link.ConsumerKey{Kind: link.Shard}})
			}},
		{name: "a body over the limit: 413", limits: link.Limits{MaxStreams: 1, MaxBodyBytes: 100, RequestsPerSecond: 10, Burst: 10},
			code: http.StatusRequestEntityTooLarge, refused: true,
			call: func(c *Client) error {
				_, err := c.Sign(context.Background(), link.Shard, pki.ServerCA, link.ConsumerRef{}, []byte(strings.Repeat("x", 200)), 0)
				return err
			}},
		{name: "the home unavailable: 503", limits: link.DefaultLimits, code: http.StatusServiceUnavailable, retryAfter: 7 * time.Second,
			call: func(c *Client) error {
				_, err := c.Sign(context.Background(), link.Shard, pki.ServerCA, link.ConsumerRef{}, []byte("csr"), 0)
				return err
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHome(t, tc.limits, unavailable)
			err := tc.call(h.client(t))
			var status *StatusError
			require.ErrorAs(t, err, &status)
			assert.Equal(t, tc.code, status.Code)
			assert.Equal(t, tc.refused, IsRefused(err))
			assert.Equal(t, tc.forbidden, IsForbidden(err))
			after, ok := RetryAfter(err)
			assert.Equal(t, tc.retryAfter, after)
			assert.Equal(t, tc.retryAfter > 0, ok)
		})
	}
	t.Run("the listener down: a network error, no status", func(t *testing.T) {
		h := newHome(t, link.DefaultLimits, unavailable)
		c := h.client(t)
		h.Close()
		_, err := c.Sign(context.Background(), link.Shard, pki.ServerCA, link.ConsumerRef{}, []byte("csr"), 0)
		require.Error(t, err)
		var status *StatusError
		assert.False(t, errors.As(err, &status))
		assert.False(t, IsRefused(err))
	})
}

// TestAnswersAreBounded: an answer over maxAnswerBytes is not read whole.
func TestAnswersAreBounded(t *testing.T) {
	h := newHome(t, link.DefaultLimits, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"certificate":"`+strings.Repeat("A", maxAnswerBytes)+`"}`)
	}))
	_, err := h.client(t).Sign(context.Background(), link.Shard, pki.ServerCA, link.ConsumerRef{}, []byte("csr"), 0)
	require.ErrorContains(t, err, "over")
}

// TestTheListenerIsVerifiedByTheServerName: a listener whose certificate is not for the
// bootstrap's server name is not spoken to.
func TestTheListenerIsVerifiedByTheServerName(t *testing.T) {
	h := newHome(t, link.DefaultLimits, http.NotFoundHandler())
	s := h.bootstrap()
	s.Data[linkpki.ServerNameKey] = []byte("root.b" + linkpki.ServerNameSuffix)
	b, err := linkpki.ResolveBootstrap(s, time.Now())
	require.NoError(t, err)
	c, err := NewClient(b)
	require.NoError(t, err)
	_, err = c.Sign(context.Background(), link.Shard, pki.ServerCA, link.ConsumerRef{}, []byte("csr"), 0)
	require.Error(t, err)
	assert.False(t, IsRefused(err))
}
