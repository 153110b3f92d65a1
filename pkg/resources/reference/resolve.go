package reference

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/keyutil"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Certificates are PEM certificates as a reference Secret holds them, and parsed.
type Certificates struct {
	// PEM is the key's content as received, to be written into local Secrets.
	PEM []byte
	// Certs are its certificates, in order.
	Certs []*x509.Certificate
}

// CheckedKeyPair is a key pair as a reference Secret holds it, checked: its key is the
// private key of the first certificate of its chain.
type CheckedKeyPair struct {
	// PEM is the key pair as received: tls.crt and tls.key of a local copy.
	PEM KeyPair
	// Cert is the first certificate of PEM.Cert: the CA's own, or the client's.
	Cert *x509.Certificate
}

// Resolved is a reference Secret read and checked. Only the fields of its Reference's keys
// are set (Reference.Keys); the others are zero.
type Resolved struct {
	Reference Reference

	// RootShardURL, ExternalURL and ExternalAdminURL are https URLs.
	RootShardURL, ExternalURL, ExternalAdminURL *url.URL
	// RootCA is the root CA (a CA), with the chain above it if any.
	RootCA Certificates
	// ClientCABundle and ServerCABundle are the merged CA bundles.
	ClientCABundle, ServerCABundle Certificates
	// CAs are the CA key pairs, by role (Reference.KeyPairs): each a CA.
	CAs map[pki.CA]CheckedKeyPair
	// Trust are the bundles of the live slots of the CAs of CAs, by role (TrustKey): each
	// holds the CA of its key pair, and while the CA rotates the other one too. A copy without
	// the key has the CA of the key pair alone.
	Trust map[pki.CA]Certificates

	// CacheURL is the CacheServer's https URL.
	CacheURL *url.URL
	// CACert is the CacheServer's CA certificate (a CA).
	CACert Certificates
	// Client is the client certificate toward the CacheServer and its key.
	Client CheckedKeyPair
}

// Resolve reads s, a copy of a reference Secret of the kind r (as a user or a sync tool put it
// into another namespace or cluster), and checks it: its type is r's, every key of r is there
// and non-empty, every URL is an https URL, every PEM block of a certificate key is a
// certificate that parses, every private key parses and belongs to its certificate, and a
// CA's certificate is a CA, and a CA's trust bundle (TrustKey, optional) holds the CA of its
// key pair. The first problem (a missing key before any malformed one, each in the order of
// r.Keys(), the key pairs, then the trust bundles, last) is an *Error: its message names the
// Secret and the key, never their content.
//
// Keys that r does not list are ignored: sync tools and GitOps add their own annotations,
// labels and sometimes keys to what they copy, and an extra key grants the consumer nothing
// since it reads r's keys alone.
func Resolve(s *corev1.Secret, r Reference) (*Resolved, error) {
	return resolve(s, r, r.Type(), "", true)
}

// ResolveKeyless reads the keyless data of a reference Secret of the kind r (its keys without
// the CA private keys, as a link's stream sends them) held in s, a Secret of type typ, under
// r's keys each prefixed with prefix (a link's bundles Secret holds shard-join.server-ca.crt),
// and checks it as Resolve does, without the keys: every certificate and trust key is there
// and well-formed, each CA's certificate a CA. The CAs of the result have no key
// (CheckedKeyPair.PEM.Key is empty): the consumer's certificates are signed elsewhere. Its
// errors are Resolve's, naming the keys of s as they are, prefix included. A CacheClient is
// not keyless: it is refused.
func ResolveKeyless(s *corev1.Secret, typ corev1.SecretType, r Reference, prefix string) (*Resolved, error) {
	if r == CacheClient {
		return nil, fmt.Errorf("the reference %q holds a client key: it has no keyless form", r)
	}
	return resolve(s, r, typ, prefix, false)
}

// KeylessKeys are the data keys the keyless form of r must have, sorted: Keys without the CA
// private keys.
func (r Reference) KeylessKeys() []string {
	var keys []string
	for _, k := range r.Keys() {
		if !slices.ContainsFunc(r.KeyPairs(), func(ca pki.CA) bool { return KeyKey(ca) == k }) {
			keys = append(keys, k)
		}
	}
	return keys
}

// resolve is Resolve, for s of type typ whose keys are r's prefixed with prefix, with the CA
// private keys when withKeys is set.
func resolve(s *corev1.Secret, r Reference, typ corev1.SecretType, prefix string, withKeys bool) (*Resolved, error) {
	if s == nil {
		return nil, &Error{Reason: operatorv1alpha1.ReasonReferenceSecretNotFound, Message: "no reference Secret", cause: ErrNotFound}
	}
	keys := r.Keys()
	if !withKeys {
		keys = r.KeylessKeys()
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("unknown reference %q", r)
	}
	key := func(k string) string { return prefix + k }
	prefixed := make([]string, len(keys))
	for i, k := range keys {
		prefixed[i] = key(k)
	}
	if err := CheckKeys(s, typ, prefixed); err != nil {
		return nil, err
	}

	res := &Resolved{Reference: r}
	urls := map[string]**url.URL{
		RootShardURLKey: &res.RootShardURL, ExternalURLKey: &res.ExternalURL, ExternalAdminURLKey: &res.ExternalAdminURL, CacheURLKey: &res.CacheURL,
	}
	certs := map[string]*Certificates{RootCAKey: &res.RootCA, ClientCABundleKey: &res.ClientCABundle, ServerCABundleKey: &res.ServerCABundle, CACertKey: &res.CACert}
	isCA := map[string]bool{RootCAKey: true, CACertKey: true}
	for _, k := range keys {
		if dst, ok := urls[k]; ok {
			u, err := HTTPSURL(s, key(k))
			if err != nil {
				return nil, err
			}
			*dst = u
		}
		if dst, ok := certs[k]; ok {
			parsed, err := ParseCertificates(s, key(k), isCA[k])
			if err != nil {
				return nil, err
			}
			*dst = Certificates{PEM: s.Data[key(k)], Certs: parsed}
		}
	}
	if pairs := r.KeyPairs(); len(pairs) > 0 {
		res.CAs = make(map[pki.CA]CheckedKeyPair, len(pairs))
		for _, ca := range pairs {
			kp, err := parseCA(s, key(CertKey(ca)), key(KeyKey(ca)), withKeys)
			if err != nil {
				return nil, err
			}
			res.CAs[ca] = kp
		}
		trust, err := trustBundles(s, pairs, res.CAs, key)
		if err != nil {
			return nil, err
		}
		res.Trust = trust
	}
	if r == CacheClient {
		kp, err := ParseKeyPair(s, ClientCertKey, ClientKeyKey, false)
		if err != nil {
			return nil, err
		}
		res.Client = kp
	}
	return res, nil
}

// parseCA is the CA under certKey of s, with its key under keyKey when withKeys is set.
func parseCA(s *corev1.Secret, certKey, keyKey string, withKeys bool) (CheckedKeyPair, error) {
	if withKeys {
		return ParseKeyPair(s, certKey, keyKey, true)
	}
	chain, err := ParseCertificates(s, certKey, true)
	if err != nil {
		return CheckedKeyPair{}, err
	}
	return CheckedKeyPair{PEM: KeyPair{Cert: s.Data[certKey]}, Cert: chain[0]}, nil
}

// CheckKeys checks that s, a Secret shaped like a reference Secret (a link's bootstrap Secret
// too), is of type typ and has every key of keys, non-empty: the first problem, in the order
// of keys, is an *Error.
func CheckKeys(s *corev1.Secret, typ corev1.SecretType, keys []string) error {
	if s.Type != typ {
		return Invalid(s, ErrWrongType, "is of type %q, not %q", s.Type, typ)
	}
	for _, k := range keys {
		if v, ok := s.Data[k]; !ok {
			return Invalid(s, ErrMissingKey, "has no key %q", k)
		} else if len(v) == 0 {
			return Invalid(s, ErrMissingKey, "has an empty key %q", k)
		}
	}
	return nil
}

// trustBundles reads the trust bundle of each CA of pairs, whose key pairs are checked: the
// certificates under its TrustKey, each a CA and the key pair's among them, or, in a copy made
// before the key existed, the key pair's CA alone.
func trustBundles(s *corev1.Secret, pairs []pki.CA, cas map[pki.CA]CheckedKeyPair, key func(string) string) (map[pki.CA]Certificates, error) {
	out := make(map[pki.CA]Certificates, len(pairs))
	for _, ca := range pairs {
		k, own := key(TrustKey(ca)), cas[ca].Cert
		v, ok := s.Data[k]
		if !ok {
			out[ca] = Certificates{PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: own.Raw}), Certs: []*x509.Certificate{own}}
			continue
		}
		if len(v) == 0 {
			return nil, Invalid(s, ErrMissingKey, "has an empty key %q", k)
		}
		parsed, err := ParseCertificates(s, k, true)
		if err != nil {
			return nil, err
		}
		hasOwn := false
		for i, c := range parsed {
			if !c.BasicConstraintsValid || !c.IsCA {
				return nil, Invalid(s, ErrNotCA, "key %q: its certificate #%d is not a CA", k, i+1)
			}
			hasOwn = hasOwn || c.Equal(own)
		}
		if !hasOwn {
			return nil, Invalid(s, ErrMalformed, "key %q does not hold the CA of %q", k, key(CertKey(ca)))
		}
		out[ca] = Certificates{PEM: v, Certs: parsed}
	}
	return out, nil
}

// HTTPSURL is the https URL under key k of s, or an *Error naming k. url.Parse's error
// quotes its input; it is not passed on, so that a key pasted under the wrong key never
// reaches a message.
func HTTPSURL(s *corev1.Secret, k string) (*url.URL, error) {
	u, err := url.Parse(string(s.Data[k]))
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return nil, Invalid(s, ErrMalformed, "key %q holds no https URL", k)
	}
	return u, nil
}

// ParseCertificates parses every PEM block under key k of s; each must be a certificate, and
// the first a CA when ca is set. Any other block refuses the key: a private key in a bundle
// would end up in a file every pod mounts.
func ParseCertificates(s *corev1.Secret, k string, ca bool) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	rest := s.Data[k]
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, Invalid(s, ErrMalformed, "key %q holds a PEM block of type %q where only certificates belong", k, block.Type)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			// x509's errors describe the structure only; they are left out all the same.
			return nil, Invalid(s, ErrMalformed, "key %q: its certificate #%d does not parse", k, len(out)+1)
		}
		out = append(out, cert)
	}
	if len(out) == 0 {
		return nil, Invalid(s, ErrMalformed, "key %q holds no PEM certificate", k)
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, Invalid(s, ErrMalformed, "key %q holds text after its PEM certificates", k)
	}
	if ca && !(out[0].BasicConstraintsValid && out[0].IsCA) {
		return nil, Invalid(s, ErrNotCA, "key %q holds a certificate that is not a CA", k)
	}
	return out, nil
}

// ParseKeyPair checks the certificate chain under certKey of s (its first certificate a CA
// when ca is set) and that the private key under keyKey is that certificate's.
func ParseKeyPair(s *corev1.Secret, certKey, keyKey string, ca bool) (CheckedKeyPair, error) {
	chain, err := ParseCertificates(s, certKey, ca)
	if err != nil {
		return CheckedKeyPair{}, err
	}
	key, err := keyutil.ParsePrivateKeyPEM(s.Data[keyKey])
	if err != nil {
		return CheckedKeyPair{}, Invalid(s, ErrMalformed, "key %q holds no private key that parses", keyKey)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return CheckedKeyPair{}, Invalid(s, ErrMalformed, "key %q holds no private key that can sign", keyKey)
	}
	public, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !public.Equal(chain[0].PublicKey) {
		return CheckedKeyPair{}, Invalid(s, ErrKeyMismatch, "key %q is not the private key of the certificate in %q", keyKey, certKey)
	}
	return CheckedKeyPair{PEM: KeyPair{Cert: s.Data[certKey], Key: s.Data[keyKey]}, Cert: chain[0]}, nil
}
