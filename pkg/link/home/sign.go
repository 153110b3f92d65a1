package home

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
)

// The refusals of the routes' handlers, beside link.Listener's.
const (
	// CSRNotAllowed: the CSR is not one the consumer kind may have signed by the CA asked
	// (link.Match), or not the Link's own client certificate again (link.CheckRenewal).
	CSRNotAllowed link.Reason = "CSRNotAllowed"
	// SigningDenied: the home's CertificateRequest was denied or failed.
	SigningDenied link.Reason = "SigningDenied"
)

// Signing is a CSR the listener let through, to be signed by an Issuer of the Link's
// namespace.
type Signing struct {
	Link link.Declaration
	// Issuer is the name of the CA Issuer, in the Link's namespace.
	Issuer string
	// Request is the PEM CSR.
	Request []byte
	// Usages are the certificate's, from the policy.
	Usages []cmv1.KeyUsage
	// Duration is the validity asked (boundDuration); zero leaves it to the issuer.
	Duration time.Duration
}

// Signer signs a Signing: in the server, a CertificateRequest (CertificateRequests).
type Signer interface {
	Sign(ctx context.Context, s Signing) (link.SignResponse, error)
}

// What a Signer fails with, for errors.Is.
var (
	// ErrDenied: the request was denied or failed; the remote gets a 403.
	ErrDenied = errors.New("the certificate request was denied")
	// ErrNotSignedYet: the request was not signed within the Signer's time; the remote gets
	// a 503 and tries again.
	ErrNotSignedYet = errors.New("the certificate request was not signed in time")
)

// The validity a remote may ask: at most a leaf's of the builders (a year), at least the
// hour cert-manager issues at the least.
var (
	maxDuration = pki.LeafDuration.Duration
	minDuration = time.Hour
)

// boundDuration is d within [minDuration, maxDuration]; zero stays zero (the issuer's).
func boundDuration(d time.Duration) time.Duration {
	switch {
	case d <= 0:
		return 0
	case d < minDuration:
		return minDuration
	case d > maxDuration:
		return maxDuration
	}
	return d
}

// sign serves POST /v1/sign/{kind}/{role}: a CSR of a consumer of kind, signed by the CA
// role of the Link's RootShard (a CacheClient's: its CacheServer's CA), once link.Match finds
// it in the policy, for the consumer the request names (Issued.ForConsumer); its usages are
// the policy's.
func (s *Server) sign(w http.ResponseWriter, r *http.Request) {
	a, _ := link.AuthorizedFrom(r.Context())
	req, csr, ok := s.readCSR(w, r, a)
	if !ok {
		return
	}
	issued, err := link.Match(csr, a.Request.Kind, a.Request.Role, a.Declaration)
	if err != nil {
		s.refuse(w, r, a, CSRNotAllowed, err.Error())
		return
	}
	if !issued.ForConsumer(csr.Subject.CommonName, req.Consumer.Name) {
		s.refuse(w, r, a, CSRNotAllowed, fmt.Sprintf("the subject CN=%q is not the %s certificate of the %s %q it is asked for",
			csr.Subject.CommonName, issued.Role, a.Request.Kind, req.Consumer.Name))
		return
	}
	s.signWith(w, r, a, Signing{Link: a.Declaration, Issuer: issuerOf(a.Declaration, a.Request.Kind, a.Request.Role),
		Request: req.Request, Usages: issued.Usage.KeyUsages(), Duration: boundDuration(req.Duration.Duration)})
}

// issuerOf is the Issuer that signs for a consumer of kind by the CA role: the RootShard's CA
// of that role, or the CacheServer's CA for its cache client.
func issuerOf(d link.Declaration, kind link.ConsumerKind, role pki.CA) string {
	if kind == link.CacheClient {
		return cacheserver.CacheServer{CacheServer: &operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Name: d.CacheServer}}}.CAName()
	}
	return pki.CAName(d.RootShard, role)
}

// renew serves POST /v1/renew: the remote's own client certificate again, as
// link.CheckRenewal checks it, signed by the RootShard's link CA.
func (s *Server) renew(w http.ResponseWriter, r *http.Request) {
	a, _ := link.AuthorizedFrom(r.Context())
	req, csr, ok := s.readCSR(w, r, a)
	if !ok {
		return
	}
	if err := link.CheckRenewal(csr, a.Declaration); err != nil {
		s.refuse(w, r, a, CSRNotAllowed, err.Error())
		return
	}
	s.signWith(w, r, a, Signing{Link: a.Declaration, Issuer: pki.CAName(a.Declaration.RootShard, pki.LinkCA),
		Request: req.Request, Usages: pki.ClientAuth.KeyUsages(), Duration: boundDuration(req.Duration.Duration)})
}

// readCSR reads the SignRequest of r and its CSR; a body that is none is a 400, a CSR that
// does not parse is refused as CSRNotAllowed.
func (s *Server) readCSR(w http.ResponseWriter, r *http.Request, a link.Authorized) (link.SignRequest, *x509.CertificateRequest, bool) {
	var req link.SignRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "the body is no SignRequest", http.StatusBadRequest)
		return req, nil, false
	}
	block, _ := pem.Decode(req.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		s.refuse(w, r, a, CSRNotAllowed, "the request holds no PEM CERTIFICATE REQUEST")
		return req, nil, false
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		s.refuse(w, r, a, CSRNotAllowed, "the certificate signing request does not parse: "+err.Error())
		return req, nil, false
	}
	return req, csr, true
}

// signWith signs sg and answers: 200 with the SignResponse, 403 when it was denied, 503 with
// Retry-After when it was not signed in time, 500 otherwise.
func (s *Server) signWith(w http.ResponseWriter, r *http.Request, a link.Authorized, sg Signing) {
	resp, err := s.cfg.Signer.Sign(r.Context(), sg)
	switch {
	case errors.Is(err, ErrDenied):
		s.refuse(w, r, a, SigningDenied, err.Error())
		return
	case errors.Is(err, ErrNotSignedYet):
		w.Header().Set("Retry-After", strconv.Itoa(int(retrySigning.Seconds())))
		http.Error(w, "", http.StatusServiceUnavailable)
		return
	case err != nil:
		s.log(r.Context(), a, "The link listener could not sign", "err", err.Error())
		http.Error(w, "", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// retrySigning is when a remote whose request was not signed in time may ask again.
const retrySigning = 10 * time.Second

// refuse answers the bare 403 of link.Listener, and tells the log and the Link why.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, a link.Authorized, reason link.Reason, detail string) {
	d := a.Declaration
	s.tell(link.Refusal{Reason: reason, Declaration: &d, Request: a.Request, Status: http.StatusForbidden, RemoteAddr: r.RemoteAddr}, detail)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = fmt.Fprint(w, `{"reason":"Forbidden"}`)
}
