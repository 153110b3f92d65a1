package apiserver

import (
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	unionauth "k8s.io/apiserver/pkg/authentication/request/union"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// DefaultVerifiedChains bounds how many verified certificate chains the server remembers.
const DefaultVerifiedChains = 1024

// CertificateVerifier verifies client certificate chains as crypto/x509 does, and remembers
// each chain it verified, so that a client presenting the same certificates again is not
// verified again while nothing the answer depends on changed. The delegated authenticators
// verify the certificate of every request, not of every connection: with kube-apiserver's
// proxy or any other client on a kept-alive connection, that is one ECDSA or RSA signature
// check per request for the same certificate.
//
// What Verify answers depends on the peer certificates, the verify options and the time.
// So a remembered chain is keyed by the certificates' DER, the options' root and
// intermediate pools (a CA provider makes a new pool whenever its CA bundle changes, and
// the key holds the old pool, so its address is never reused for another) and key usages,
// and it answers only while the time is within the validity of every certificate in the
// chains. Failures are not remembered. Options with a fixed time or a DNS name, or no roots
// (the system's), are verified every time.
type CertificateVerifier struct {
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Max bounds the remembered chains; when full, all are forgotten. Zero is
	// DefaultVerifiedChains.
	Max int

	mu       sync.Mutex
	verified map[verifiedKey]verifiedChains
	// verifications counts the calls of crypto/x509's Verify, for tests.
	verifications atomic.Int64
}

type verifiedKey struct {
	roots, intermediates *x509.CertPool
	usages               string
	certificates         [sha256.Size]byte
}

type verifiedChains struct {
	chains              [][]*x509.Certificate
	notBefore, notAfter time.Time
}

// Verify verifies peers[0] with opts as the delegated authenticators do: peers[1:] are its
// intermediates unless opts has its own.
func (v *CertificateVerifier) Verify(peers []*x509.Certificate, opts x509.VerifyOptions) ([][]*x509.Certificate, error) {
	if len(peers) == 0 {
		return nil, errors.New("x509: no certificate to verify")
	}
	used := peers[:1]
	if opts.Intermediates == nil && len(peers) > 1 {
		used = peers
		opts.Intermediates = x509.NewCertPool()
		for _, intermediate := range peers[1:] {
			opts.Intermediates.AddCert(intermediate)
		}
	}
	if opts.Roots == nil || opts.DNSName != "" || !opts.CurrentTime.IsZero() {
		v.verifications.Add(1)
		return peers[0].Verify(opts)
	}
	key := verifiedKey{roots: opts.Roots, usages: fmt.Sprint(opts.KeyUsages)}
	if len(used) == 1 {
		key.intermediates = opts.Intermediates
	}
	digest := sha256.New()
	for _, c := range used {
		fmt.Fprintf(digest, "%d:", len(c.Raw))
		digest.Write(c.Raw)
	}
	digest.Sum(key.certificates[:0])

	now := v.now()
	v.mu.Lock()
	entry, ok := v.verified[key]
	v.mu.Unlock()
	if ok && !now.Before(entry.notBefore) && !now.After(entry.notAfter) {
		return entry.chains, nil
	}

	opts.CurrentTime = now
	v.verifications.Add(1)
	chains, err := peers[0].Verify(opts)
	if err != nil {
		return nil, err
	}
	entry = verifiedChains{chains: chains}
	for _, chain := range chains {
		for _, c := range chain {
			if entry.notBefore.IsZero() || c.NotBefore.After(entry.notBefore) {
				entry.notBefore = c.NotBefore
			}
			if entry.notAfter.IsZero() || c.NotAfter.Before(entry.notAfter) {
				entry.notAfter = c.NotAfter
			}
		}
	}
	v.mu.Lock()
	if v.verified == nil || len(v.verified) >= v.max() {
		v.verified = map[verifiedKey]verifiedChains{}
	}
	v.verified[key] = entry
	v.mu.Unlock()
	return chains, nil
}

func (v *CertificateVerifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

func (v *CertificateVerifier) max() int {
	if v.Max <= 0 {
		return DefaultVerifiedChains
	}
	return v.Max
}

// WithCertificateVerifier answers a request with a client certificate as the delegated
// authenticator full would, in the same order, but verifies the certificate through
// verifier: first as an authenticating proxy's (the request-header CA, its allowed names,
// then the user its headers name), then as the user's own (the client CA, the user its
// common name and organizations name). A request neither answers, or whose certificate
// fails, goes to full unchanged, so that bearer tokens, anonymous requests and every
// error are full's own. The answers are full's because both use the same CA providers,
// and the same code after the verification.
func WithCertificateVerifier(full authenticator.Request, verifier *CertificateVerifier, clientCA dynamiccertificates.CAContentProvider, requestHeader *authenticatorfactory.RequestHeaderConfig) authenticator.Request {
	var fast []authenticator.Request
	if requestHeader != nil && requestHeader.CAContentProvider != nil {
		headers := headerrequest.NewDynamic(requestHeader.UsernameHeaders, requestHeader.UIDHeaders, requestHeader.GroupHeaders, requestHeader.ExtraHeaderPrefixes)
		fast = append(fast, &verifiedCertificate{verifier: verifier, options: requestHeader.CAContentProvider.VerifyOptions, names: requestHeader.AllowedClientNames,
			then: func(req *http.Request, _ [][]*x509.Certificate) (*authenticator.Response, bool, error) {
				return headers.AuthenticateRequest(req)
			}})
	}
	if clientCA != nil {
		fast = append(fast, &verifiedCertificate{verifier: verifier, options: clientCA.VerifyOptions,
			then: func(_ *http.Request, chains [][]*x509.Certificate) (*authenticator.Response, bool, error) {
				for _, chain := range chains {
					if resp, ok, err := x509request.CommonNameUserConversion.User(chain); ok && err == nil {
						return resp, true, nil
					}
				}
				return nil, false, nil
			}})
	}
	if len(fast) == 0 {
		return full
	}
	return &certificateFirst{fast: group.NewAuthenticatedGroupAdder(unionauth.New(fast...)), full: full}
}

// certificateFirst is fast when it authenticates a request, and full otherwise.
type certificateFirst struct {
	fast, full authenticator.Request
}

func (a *certificateFirst) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	if resp, ok, err := a.fast.AuthenticateRequest(req); ok && err == nil {
		return resp, true, nil
	}
	return a.full.AuthenticateRequest(req)
}

// verifiedCertificate authenticates a request whose client certificate verifies with
// options (and, when names has any, has one of them as its common name) by then.
type verifiedCertificate struct {
	verifier *CertificateVerifier
	options  x509request.VerifyOptionFunc
	names    headerrequest.StringSliceProvider
	then     func(req *http.Request, chains [][]*x509.Certificate) (*authenticator.Response, bool, error)
}

func (a *verifiedCertificate) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	if req.TLS == nil || len(req.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	opts, ok := a.options()
	if !ok {
		return nil, false, nil
	}
	chains, err := a.verifier.Verify(req.TLS.PeerCertificates, opts)
	if err != nil {
		return nil, false, err
	}
	if a.names != nil {
		if allowed := a.names.Value(); len(allowed) > 0 && !slices.Contains(allowed, req.TLS.PeerCertificates[0].Subject.CommonName) {
			return nil, false, fmt.Errorf("x509: subject with cn=%s is not in the allowed list", req.TLS.PeerCertificates[0].Subject.CommonName)
		}
	}
	return a.then(req, chains)
}
