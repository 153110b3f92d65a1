package link

import (
	"crypto/x509"
	"net/url"
	"slices"
	"time"
)

// Reason is why the listener refuses a request: it goes to the log and to a Warning Event on
// the declaration, never into the response.
type Reason string

// The refusals of Authorize, in the order it checks them.
const (
	// NoClientCertificate: the request came without a client certificate.
	NoClientCertificate Reason = "NoClientCertificate"
	// UnknownIdentity: no declaration has an identity among the certificate's DNS SANs.
	UnknownIdentity Reason = "UnknownIdentity"
	// UntrustedChain: the certificate does not chain, for client auth, to the link CA of the
	// RootShard of the declaration it names (or of any declaration with its identity).
	UntrustedChain Reason = "UntrustedChain"
	// DeclarationMismatch: the certificate chains to the link CA, but its URI SAN names no
	// declaration with its identity, or another one: a Link deleted and made again with the
	// same identity, whose old certificate names the old UID.
	DeclarationMismatch Reason = "DeclarationMismatch"
	// NotYetValid and Expired: a certificate of the chain is outside its validity.
	NotYetValid Reason = "CertificateNotYetValid"
	Expired     Reason = "CertificateExpired"
	// WrongServerName: the SNI is not the one of the declaration's RootShard (another
	// RootShard's, or none).
	WrongServerName Reason = "WrongServerName"
	// DeclarationDeleting: the declaration is being deleted; it admits nothing more.
	DeclarationDeleting Reason = "DeclarationDeleting"
	// ConsumerKindNotAllowed: the declaration does not admit the consumer kind asked for.
	ConsumerKindNotAllowed Reason = "ConsumerKindNotAllowed"
	// OperationNotAllowed: the request asks no operation the declaration allows: an unknown
	// route, or a signature by a CA the consumer kind is not issued from.
	OperationNotAllowed Reason = "OperationNotAllowed"
)

// Decision is the answer of Authorize.
type Decision struct {
	// Reason is empty when the request is allowed.
	Reason Reason
	// Declaration is the declaration the certificate proved to be for, by chaining to its
	// RootShard's link CA; nil when none was proven. A refusal with a declaration goes to a
	// Warning Event on it: a stranger cannot make Events on a Link.
	Declaration *Declaration
}

// Allowed reports whether the request may go on.
func (d Decision) Allowed() bool { return d.Reason == "" }

// Authorize decides whether the peer's certificate chain (leaf first, as TLS has it), which
// crypto/tls did not verify, may ask request of the listener under serverName (the SNI),
// given the declarations and the trust of their RootShards, at now.
func Authorize(peer []*x509.Certificate, serverName string, request Request, declarations []Declaration, trust Trust, now time.Time) Decision {
	if len(peer) == 0 || peer[0] == nil {
		return Decision{Reason: NoClientCertificate}
	}
	leaf := peer[0]
	var candidates []Declaration
	for _, d := range declarations {
		// A declaration without an identity or a UID names no certificate.
		if d.Identity != "" && d.UID != "" && slices.Contains(leaf.DNSNames, d.Identity) {
			candidates = append(candidates, d)
		}
	}
	if len(candidates) == 0 {
		return Decision{Reason: UnknownIdentity}
	}
	intermediates := x509.NewCertPool()
	for _, c := range peer[1:] {
		if c != nil {
			intermediates.AddCert(c)
		}
	}
	named := slices.IndexFunc(candidates, func(d Declaration) bool { return hasURI(leaf, d.URI()) })
	if named < 0 {
		// A certificate of the link CA that names no declaration of its identity, or one
		// from elsewhere: only the former is news for the declaration's owner.
		for _, d := range candidates {
			if _, ok := verify(leaf, intermediates, trust[d.Key()], now); ok {
				return Decision{Reason: DeclarationMismatch, Declaration: &d}
			}
		}
		return Decision{Reason: UntrustedChain}
	}
	d := candidates[named]
	rt := trust[d.Key()]
	validity, ok := verify(leaf, intermediates, rt, now)
	if !ok {
		return Decision{Reason: UntrustedChain}
	}
	refuse := func(r Reason) Decision { return Decision{Reason: r, Declaration: &d} }
	switch {
	case validity != "":
		return refuse(validity)
	case rt.ServerName == "" || serverName != rt.ServerName:
		return refuse(WrongServerName)
	case d.Deleting:
		return refuse(DeclarationDeleting)
	}
	if r := allowed(request, d); r != "" {
		return refuse(r)
	}
	return Decision{Declaration: &d}
}

// verify reports whether leaf chains, for client auth, to the link CAs of rt, and, if so,
// the validity refusal at now of the best chain, empty when one chain is valid throughout.
// The chain is built at a time within the leaf's validity, so that a genuine certificate
// out of its validity is told apart from a stranger's.
func verify(leaf *x509.Certificate, intermediates *x509.CertPool, rt RootShardTrust, now time.Time) (Reason, bool) {
	if len(rt.LinkCAs) == 0 {
		return "", false
	}
	roots := x509.NewCertPool()
	for _, c := range rt.LinkCAs {
		roots.AddCert(c)
	}
	at := now
	if at.Before(leaf.NotBefore) {
		at = leaf.NotBefore
	}
	if at.After(leaf.NotAfter) {
		at = leaf.NotAfter
	}
	chains, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates, CurrentTime: at,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil || len(chains) == 0 {
		return "", false
	}
	var first Reason
	for _, chain := range chains {
		r := validityAt(chain, now)
		if r == "" {
			return "", true
		}
		if first == "" {
			first = r
		}
	}
	return first, true
}

// validityAt is the refusal for the first certificate of chain outside its validity at now.
func validityAt(chain []*x509.Certificate, now time.Time) Reason {
	for _, c := range chain {
		switch {
		case now.Before(c.NotBefore):
			return NotYetValid
		case now.After(c.NotAfter):
			return Expired
		}
	}
	return ""
}

func hasURI(c *x509.Certificate, uri string) bool {
	return slices.ContainsFunc(c.URIs, func(u *url.URL) bool { return u.String() == uri })
}

// allowed is the refusal of request by d, empty when d allows it.
func allowed(request Request, d Declaration) Reason {
	switch request.Operation {
	case Sign:
		if !d.Allows(request.Kind) {
			return ConsumerKindNotAllowed
		}
		if !signs(request.Kind, request.Role) {
			return OperationNotAllowed
		}
	case ReportEvent:
		if !d.Allows(request.Kind) {
			return ConsumerKindNotAllowed
		}
	case Deregister:
		if !d.Allows(request.Kind) {
			return ConsumerKindNotAllowed
		}
		if !deregisters(request.Kind) {
			return OperationNotAllowed
		}
	case WatchBundles, Renew:
		if request.Kind != "" || request.Role != "" {
			return OperationNotAllowed
		}
	default:
		return OperationNotAllowed
	}
	return ""
}
