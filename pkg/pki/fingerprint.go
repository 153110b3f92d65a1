package pki

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
)

// Fingerprint is the SHA-256 fingerprint of a certificate's DER, in lower-case hex: how a
// linked remote reports the CAs its pods trust (docs/links.md#the-wire), and how the home
// compares them with its CA slots.
func Fingerprint(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.Raw)
	return hex.EncodeToString(sum[:])
}

// Fingerprints are the Fingerprints of each CERTIFICATE block of the PEM bundle, in order.
// It is an error when a block does not parse or the bundle holds none.
func Fingerprints(bundle []byte) ([]string, error) {
	var out []string
	for rest := bundle; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d of the bundle: %w", len(out)+1, err)
		}
		out = append(out, Fingerprint(cert))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no certificate in the bundle")
	}
	return out, nil
}
