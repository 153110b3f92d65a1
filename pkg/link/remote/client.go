package remote

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// maxAnswerBytes is the largest answer of a sign, renew or events route the client reads: a
// chain is a few kilobytes.
const maxAnswerBytes = 1 << 20

// RequestTimeout bounds a sign, renew or events request, the home's wait for its own
// CertificateRequest included; the stream is bounded by its heartbeats instead.
const RequestTimeout = time.Minute

// Client speaks to the listener of one bootstrap Secret: mutual TLS (TLS 1.3, HTTP/2) to its
// listener-url, with its server-name as SNI and as the name the listener's certificate is
// verified by against its ca.crt alone, and its client pair.
type Client struct {
	base     *url.URL
	http     *http.Client
	identity string
	link     linkpki.Ref

	// Heartbeat is the stream's heartbeat interval: silence of three of them is a dead
	// stream. link.HeartbeatInterval unless a test sets it.
	Heartbeat time.Duration
	// Backoff is the wait between two streams that ended or failed, jittered and capped;
	// it starts again from its first step after a stream that delivered something.
	Backoff wait.Backoff
}

// DefaultBackoff is the wait between two stream attempts: 1 s doubling up to a minute, each
// up to half again longer, so that the remotes of a restarted home do not come back at once.
var DefaultBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.5, Steps: 1 << 30, Cap: time.Minute}

// NewClient is the Client of the bootstrap Secret b, as ResolveBootstrap checked it.
func NewClient(b *linkpki.Bootstrapped) (*Client, error) {
	pair, err := tls.X509KeyPair(b.Client.PEM.Cert, b.Client.PEM.Key)
	if err != nil {
		return nil, fmt.Errorf("the client pair of the bootstrap Secret: %w", err)
	}
	roots := x509.NewCertPool()
	for _, c := range b.Trust.Certs {
		roots.AddCert(c)
	}
	transport := &http.Transport{
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS13, ServerName: b.ServerName, RootCAs: roots,
			Certificates: []tls.Certificate{pair}},
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
	}
	return &Client{base: b.ListenerURL, http: &http.Client{Transport: transport}, identity: b.Identity, link: b.Link,
		Heartbeat: link.HeartbeatInterval, Backoff: DefaultBackoff}, nil
}

// Close closes the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// url is the listener's URL of path.
func (c *Client) url(path string) string {
	u := *c.base
	u.Path = path
	u.RawQuery = ""
	return u.String()
}

// do sends body (JSON) to path and reads the answer, a *StatusError unless it is want.
func (c *Client) do(ctx context.Context, method, path string, body any, want int) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url(path), r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s to the link's listener: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != want {
		return nil, statusError(method+" "+path, resp)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer of %s %s: %w", method, path, err)
	}
	if len(data) > maxAnswerBytes {
		return nil, fmt.Errorf("the answer of %s %s is over %d bytes", method, path, maxAnswerBytes)
	}
	return data, nil
}

// statusError is the StatusError of resp, with the reason of its body when it has one.
func statusError(route string, resp *http.Response) *StatusError {
	var body struct {
		Reason string `json:"reason"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 4<<10)).Decode(&body)
	return &StatusError{Route: route, Code: resp.StatusCode, Reason: body.Reason, RetryAfter: retryAfterHeader(resp.Header)}
}

// Sign asks the home to sign csrPEM for the consumer of kind, by the CA role, for duration
// (zero leaves it to the home's issuer): POST /v1/sign/{kind}/{role}.
func (c *Client) Sign(ctx context.Context, kind link.ConsumerKind, role pki.CA, consumer link.ConsumerRef, csrPEM []byte,
	duration time.Duration) (link.SignResponse, error) {
	req := link.SignRequest{Consumer: consumer, Request: csrPEM, Duration: metav1.Duration{Duration: duration}}
	return c.sign(ctx, link.SignPath+string(kind)+"/"+string(role), req)
}

func (c *Client) sign(ctx context.Context, path string, req link.SignRequest) (link.SignResponse, error) {
	data, err := c.do(ctx, http.MethodPost, path, req, http.StatusOK)
	if err != nil {
		return link.SignResponse{}, err
	}
	var out link.SignResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return link.SignResponse{}, fmt.Errorf("the answer of POST %s: %w", path, err)
	}
	if len(out.Certificate) == 0 {
		return link.SignResponse{}, fmt.Errorf("the answer of POST %s holds no certificate", path)
	}
	return out, nil
}

// Renew asks the home for a new client certificate, for a key made here: POST /v1/renew with
// the CSR link.CheckRenewal wants (CN and the one DNS SAN the identity, the one URI SAN the
// Link's). The answer is the new pair, to be written into the bootstrap Secret by the
// caller; its key never left this process.
func (c *Client) Renew(ctx context.Context) (reference.KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return reference.KeyPair{}, err
	}
	uri, err := url.Parse(linkpki.URIPrefix + c.link.Namespace + "/" + c.link.Name + "/" + string(c.link.UID))
	if err != nil {
		return reference.KeyPair{}, err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: c.identity},
		DNSNames: []string{c.identity}, URIs: []*url.URL{uri}}, key)
	if err != nil {
		return reference.KeyPair{}, err
	}
	csr := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	out, err := c.sign(ctx, link.RenewPath, link.SignRequest{Request: csr})
	if err != nil {
		return reference.KeyPair{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return reference.KeyPair{}, err
	}
	pair := reference.KeyPair{Cert: out.Certificate, Key: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})}
	if _, err := tls.X509KeyPair(pair.Cert, pair.Key); err != nil {
		return reference.KeyPair{}, fmt.Errorf("the renewed certificate is not of the key asked for: %w", err)
	}
	return pair, nil
}

// Report sends a consumer's Event: POST /v1/events/{kind}.
func (c *Client) Report(ctx context.Context, ev link.Event) error {
	_, err := c.do(ctx, http.MethodPost, link.EventsPath+string(ev.Kind), ev, http.StatusNoContent)
	return err
}

// Deregister asks the home to delete kcp's Shard object of the linked consumer of kind, being
// deleted: POST /v1/deregister/{kind}. Nil once kcp has it no more; a 409 (the home left it in
// place, StatusError.Reason says why) and a 403 are refusals (IsRefused), which asking again
// does not change.
func (c *Client) Deregister(ctx context.Context, kind link.ConsumerKind, consumer link.ConsumerRef) error {
	_, err := c.do(ctx, http.MethodPost, link.DeregisterPath+string(kind), link.DeregisterRequest{Consumer: consumer}, http.StatusNoContent)
	return err
}
