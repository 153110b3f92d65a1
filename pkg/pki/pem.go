package pki

import (
	"encoding/pem"
	"fmt"
)

// FirstCertificate returns the first PEM certificate of a chain. cert-manager appends the
// issuing chain to a CA's tls.crt; a bundle that trusted the CAs above it too would accept
// what they sign elsewhere, and keep accepting credentials of a rotated CA.
func FirstCertificate(chain []byte) ([]byte, error) {
	block, _ := pem.Decode(chain)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("no PEM certificate")
	}
	return pem.EncodeToMemory(block), nil
}
