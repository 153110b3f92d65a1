package pki

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
)

// A shard signs its ServiceAccount tokens with the key of its service-account leaf, and
// every component verifies them by that leaf's public key, not by the CA that signed it: a
// new key breaks every token the old one signed. So the leaf keeps its key when cert-manager
// renews it (SigningRotation), and a rotation of the service-account CA, which issues the
// leaves again with new keys during Start, keeps the old public keys verifiable until
// Complete: from the CA's first rotation on, the components verify a shard's tokens by the
// Secret <shard>-service-account-trust, whose tls.crt holds the public certificates of the
// shard's live signing keys (ServiceAccountKeys), as <ca>-trust holds a CA's live slots.

// ServiceAccountKeys is the tls.crt of a shard's <shard>-service-account-trust: the first
// certificate of leaf, the tls.crt of its current signing leaf, after, while the
// service-account CA rotates, the certificates of previous (that Secret's tls.crt as it is)
// whose key is another, in their order; once the rotation is Completed, the current key
// alone, so that the tokens of the old one stop verifying. A renewed leaf, with the same key,
// takes its predecessor's place.
func ServiceAccountKeys(previous, leaf []byte, rotating bool) ([]byte, error) {
	current, err := FirstCertificate(leaf)
	if err != nil {
		return nil, fmt.Errorf("reading the signing leaf: %w", err)
	}
	key, err := publicKeyOf(current)
	if err != nil {
		return nil, err
	}
	var out []byte
	for rest := previous; rotating; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil || bytes.Equal(c.RawSubjectPublicKeyInfo, key) {
			continue
		}
		out = append(out, pem.EncodeToMemory(block)...)
	}
	return append(out, current...), nil
}

// HoldsServiceAccountKey reports whether keys, a <shard>-service-account-trust's tls.crt,
// holds the public key of leaf, a signing leaf's tls.crt.
func HoldsServiceAccountKey(keys, leaf []byte) bool {
	current, err := FirstCertificate(leaf)
	if err != nil {
		return false
	}
	key, err := publicKeyOf(current)
	if err != nil {
		return false
	}
	for rest := keys; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return false
		}
		if c, err := x509.ParseCertificate(block.Bytes); err == nil && bytes.Equal(c.RawSubjectPublicKeyInfo, key) {
			return true
		}
	}
}

// publicKeyOf is the DER of the public key of a PEM certificate.
func publicKeyOf(certPEM []byte) ([]byte, error) {
	block, _ := pem.Decode(certPEM)
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing a signing certificate: %w", err)
	}
	return c.RawSubjectPublicKeyInfo, nil
}
