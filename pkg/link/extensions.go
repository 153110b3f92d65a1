package link

import (
	"crypto/x509"
	"encoding/asn1"
	"fmt"
	"slices"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

var (
	oidSAN              = asn1.ObjectIdentifier{2, 5, 29, 17}
	oidKeyUsage         = asn1.ObjectIdentifier{2, 5, 29, 15}
	oidExtKeyUsage      = asn1.ObjectIdentifier{2, 5, 29, 37}
	oidBasicConstraints = asn1.ObjectIdentifier{2, 5, 29, 19}
	oidServerAuth       = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 1}
	oidClientAuth       = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 2}
)

// checkExtensions refuses every extension a CSR asks but the SANs (checkSANs), the key
// usages and extended key usages of i's usage (cert-manager writes them into its CSRs), and
// basic constraints that make no CA.
func checkExtensions(csr *x509.CertificateRequest, i Issued, _ Declaration) error {
	keyUsage, extKeyUsages := usages(i.Usage)
	for _, ext := range csr.Extensions {
		switch {
		case ext.Id.Equal(oidSAN):
			if err := checkSANTypes(ext.Value); err != nil {
				return err
			}
		case ext.Id.Equal(oidKeyUsage):
			var bits asn1.BitString
			if rest, err := asn1.Unmarshal(ext.Value, &bits); err != nil || len(rest) > 0 {
				return fmt.Errorf("a malformed key usage extension")
			}
			for b := range bits.BitLength {
				if bits.At(b) == 1 && keyUsage&(1<<b) == 0 {
					return fmt.Errorf("the key usage bit %d, which the certificate does not have", b)
				}
			}
		case ext.Id.Equal(oidExtKeyUsage):
			var oids []asn1.ObjectIdentifier
			if rest, err := asn1.Unmarshal(ext.Value, &oids); err != nil || len(rest) > 0 {
				return fmt.Errorf("a malformed extended key usage extension")
			}
			for _, oid := range oids {
				if !slices.ContainsFunc(extKeyUsages, oid.Equal) {
					return fmt.Errorf("the extended key usage %s, which the certificate does not have", oid)
				}
			}
		case ext.Id.Equal(oidBasicConstraints):
			var bc struct {
				IsCA       bool `asn1:"optional"`
				MaxPathLen int  `asn1:"optional,default:-1"`
			}
			if rest, err := asn1.Unmarshal(ext.Value, &bc); err != nil || len(rest) > 0 {
				return fmt.Errorf("malformed basic constraints")
			}
			if bc.IsCA {
				return fmt.Errorf("a CA certificate")
			}
		default:
			return fmt.Errorf("the extension %s, which no certificate carries", ext.Id)
		}
	}
	return nil
}

// The tags of the general names a SAN extension may hold: crypto/x509 reads the DNS names,
// IP addresses, URIs and e-mail addresses (checkSANs) and skips any other, which the
// signed certificate could carry all the same.
const (
	tagEmail = 1
	tagDNS   = 2
	tagURI   = 6
	tagIP    = 7
)

// checkSANTypes refuses a SAN extension with a general name crypto/x509 does not read.
func checkSANTypes(value []byte) error {
	var seq asn1.RawValue
	if rest, err := asn1.Unmarshal(value, &seq); err != nil || len(rest) > 0 || seq.Tag != asn1.TagSequence {
		return fmt.Errorf("a malformed SAN extension")
	}
	for rest := seq.Bytes; len(rest) > 0; {
		var name asn1.RawValue
		var err error
		if rest, err = asn1.Unmarshal(rest, &name); err != nil {
			return fmt.Errorf("a malformed SAN extension")
		}
		if name.Class != asn1.ClassContextSpecific || !slices.Contains([]int{tagEmail, tagDNS, tagURI, tagIP}, name.Tag) {
			return fmt.Errorf("a SAN of type %d, which no certificate carries", name.Tag)
		}
	}
	return nil
}

// usages are the key usage bits and extended key usages of u, as cert-manager puts them
// into a certificate (pki.Usage.KeyUsages).
func usages(u pki.Usage) (x509.KeyUsage, []asn1.ObjectIdentifier) {
	var ku x509.KeyUsage
	var eku []asn1.ObjectIdentifier
	for _, k := range u.KeyUsages() {
		switch k {
		case cmv1.UsageDigitalSignature:
			ku |= x509.KeyUsageDigitalSignature
		case cmv1.UsageKeyEncipherment:
			ku |= x509.KeyUsageKeyEncipherment
		case cmv1.UsageServerAuth:
			eku = append(eku, oidServerAuth)
		case cmv1.UsageClientAuth:
			eku = append(eku, oidClientAuth)
		}
	}
	return ku, eku
}
