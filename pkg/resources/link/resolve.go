package link

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// What is wrong with a bootstrap Secret beyond what reference's sentinels say (missing key,
// wrong type, malformed, key pair mismatch, not a CA), for errors.Is.
var (
	// ErrNotTrusted: the client certificate is not signed by a CA of ca.crt.
	ErrNotTrusted = errors.New("link client certificate not signed by the link CA")
	// ErrNotValidNow: the client certificate is not valid at the time of the check.
	ErrNotValidNow = errors.New("link client certificate not valid now")
	// ErrNotLinkClient: the client certificate is not a link client certificate: a CA, not
	// for client auth, or without exactly one DNS SAN and one link URI SAN.
	ErrNotLinkClient = errors.New("not a link client certificate")
)

// Bootstrapped is a bootstrap Secret read and checked.
type Bootstrapped struct {
	// ListenerURL is the listener's https URL.
	ListenerURL *url.URL
	// ServerName is the name to send as SNI and to verify the listener by.
	ServerName string
	// Trust is the link CA trust the remote verifies the listener by, each certificate a CA:
	// Carried, until the link's stream delivered a link CA bundle; then that bundle
	// (LinkTrust).
	Trust reference.Certificates
	// Carried are the CAs of the bootstrap Secret's ca.crt, as it was carried.
	Carried []*x509.Certificate
	// Client is the remote's client certificate and key, signed by a CA of Trust.
	Client reference.CheckedKeyPair
	// Identity is the client certificate's DNS SAN, and Link the Link its URI SAN names.
	Identity string
	Link     Ref
}

// ResolveBootstrap reads s, a bootstrap Secret (or a copy of one, in the remote cluster), and
// checks it at the time now: its type is BootstrapType, every key of BootstrapKeys is there
// and non-empty, listener-url is an https URL, server-name a DNS name, ca.crt holds CA
// certificates only, tls.key is the private key of the first certificate of tls.crt, which
// is a link client certificate (not a CA, for client auth, one DNS SAN and one link URI SAN),
// valid at now and signed by a CA of ca.crt (the link CA signs its leaves directly). The
// first problem, in that order, is a *reference.Error whose message names the Secret and the
// key, never their content; its cause is one of reference's sentinels or of this package's.
// Keys that are not the bootstrap's are ignored, as reference.Resolve ignores them.
func ResolveBootstrap(s *corev1.Secret, now time.Time) (*Bootstrapped, error) {
	return resolveBootstrap(s, nil, now)
}

// ResolveLinkedBootstrap is ResolveBootstrap of s on the remote side, with the link CA
// bundle the link's stream delivered into bundles, its bundles Secret (nil when there is
// none; not read unless s owns it, by UID): the client certificate may be signed by a CA of
// either, as it is once renewed from a rotated link CA, and Trust is LinkTrust's.
func ResolveLinkedBootstrap(s, bundles *corev1.Secret, now time.Time) (*Bootstrapped, error) {
	var received []byte
	if s != nil && bundles != nil && OwnedBy(bundles, s) {
		received = bundles.Data[BundlesLinkCAKey]
	}
	return resolveBootstrap(s, received, now)
}

func resolveBootstrap(s *corev1.Secret, received []byte, now time.Time) (*Bootstrapped, error) {
	if s == nil {
		return nil, errors.New("no bootstrap Secret")
	}
	if err := reference.CheckKeys(s, BootstrapType, BootstrapKeys); err != nil {
		return nil, err
	}
	listener, err := reference.HTTPSURL(s, ListenerURLKey)
	if err != nil {
		return nil, err
	}
	serverName := string(s.Data[ServerNameKey])
	if len(validation.IsDNS1123Subdomain(serverName)) > 0 {
		return nil, reference.Invalid(s, reference.ErrMalformed, "key %q holds no DNS name", ServerNameKey)
	}
	trust, err := reference.ParseCertificates(s, CACertKey, true)
	if err != nil {
		return nil, err
	}
	for i, c := range trust {
		if !c.BasicConstraintsValid || !c.IsCA {
			return nil, reference.Invalid(s, reference.ErrNotCA, "key %q: its certificate #%d is not a CA", CACertKey, i+1)
		}
	}
	client, err := reference.ParseKeyPair(s, ClientCertKey, ClientKeyKey, false)
	if err != nil {
		return nil, err
	}
	leaf := client.Cert
	ref, ok := linkClient(leaf)
	if !ok {
		return nil, reference.Invalid(s, ErrNotLinkClient, "key %q holds no link client certificate "+
			"(one for client auth only, not a CA, with one DNS SAN and one %s URI SAN)", ClientCertKey, URIPrefix)
	}
	if now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) {
		return nil, reference.Invalid(s, ErrNotValidNow, "key %q holds a certificate valid from %s until %s, not at %s", ClientCertKey,
			leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	linkTrust, trustPEM, of := LinkTrust(trust, leaf, received), s.Data[CACertKey], fmt.Sprintf("%q", CACertKey)
	if len(receivedCAs(received)) > 0 {
		trustPEM, of = certificatesPEM(linkTrust), fmt.Sprintf("%q or of the link CA bundle received", CACertKey)
	}
	roots := x509.NewCertPool()
	for _, c := range linkTrust {
		roots.AddCert(c)
	}
	// No intermediates: a leaf the link CA did not sign itself is not a link's.
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		// x509's errors name certificates; they are left out, as reference's are.
		return nil, reference.Invalid(s, ErrNotTrusted, "key %q holds a certificate that no CA of %s signed, valid at %s", ClientCertKey, of,
			now.UTC().Format(time.RFC3339))
	}
	return &Bootstrapped{
		ListenerURL: listener,
		ServerName:  serverName,
		Trust:       reference.Certificates{PEM: trustPEM, Certs: linkTrust},
		Carried:     trust,
		Client:      client,
		Identity:    leaf.DNSNames[0],
		Link:        ref,
	}, nil
}

// linkClient reports whether c is shaped as a link client certificate (ClientLeaf), and the
// Link its URI SAN names.
func linkClient(c *x509.Certificate) (Ref, bool) {
	if c.IsCA || !slices.Equal(c.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) ||
		len(c.DNSNames) != 1 || len(c.URIs) != 1 || len(c.IPAddresses) > 0 || len(c.EmailAddresses) > 0 {
		return Ref{}, false
	}
	return ParseIdentityURI(c.URIs[0].String())
}

// LinkTrust is the link CA trust of a remote whose bootstrap Secret carried the CAs carried
// and holds the client certificate client, and whose link's stream delivered the link CA
// bundle received (nil before it did). Until the stream delivered one, the carried CAs. Then
// the received ones, which follow a rotation of the link CA (both slots while it rotates,
// the new one alone once it completed), and of the carried ones only one that signed the
// client certificate: a bootstrap Secret carried again, from a link CA newer than the
// bundle received. A received bundle with anything but CA certificates in it, or none, is
// not used.
func LinkTrust(carried []*x509.Certificate, client *x509.Certificate, received []byte) []*x509.Certificate {
	got := receivedCAs(received)
	if len(got) == 0 {
		return carried
	}
	for _, c := range carried {
		if client.CheckSignatureFrom(c) == nil && !slices.ContainsFunc(got, c.Equal) {
			got = append(got, c)
		}
	}
	return got
}

// receivedCAs are the CA certificates of a received link CA bundle; nil when it holds
// anything else, or none.
func receivedCAs(bundle []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for block, rest := pem.Decode(bundle); block != nil; block, rest = pem.Decode(rest) {
		c, err := x509.ParseCertificate(block.Bytes)
		if block.Type != "CERTIFICATE" || err != nil || !c.BasicConstraintsValid || !c.IsCA {
			return nil
		}
		out = append(out, c)
	}
	return out
}

// certificatesPEM is the PEM bundle of certs.
func certificatesPEM(certs []*x509.Certificate) []byte {
	var out []byte
	for _, c := range certs {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	return out
}
