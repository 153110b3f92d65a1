package link

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"fmt"
	"net"
	"slices"
	"strings"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
)

// MinRSABits is the smallest RSA key the listener signs.
const MinRSABits = 2048

// CheckCSR checks that csr is one of the certificates a consumer of kind, linked by d, is
// issued by the CA role (Match).
func CheckCSR(csr *x509.CertificateRequest, kind ConsumerKind, role pki.CA, d Declaration) error {
	_, err := Match(csr, kind, role, d)
	return err
}

// Match is the certificate of the policy that csr asks for, from a consumer of kind linked
// by d, to the CA role: its signature is valid, its key is ECDSA P-256 or P-384 or RSA of at
// least MinRSABits, its subject is the certificate's exactly (CN and O; any other attribute
// but those a certificate template may add is refused), it asks no usage the certificate
// has not, and no SAN the builders do not put: DNS SANs in serving certificates only,
// within d's dnsNames, IP SANs only the builders' own, no URI or e-mail SAN.
func Match(csr *x509.CertificateRequest, kind ConsumerKind, role pki.CA, d Declaration) (Issued, error) {
	if csr == nil {
		return Issued{}, fmt.Errorf("no certificate signing request")
	}
	if err := csr.CheckSignature(); err != nil {
		return Issued{}, fmt.Errorf("the signature of the request: %w", err)
	}
	if err := checkKey(csr.PublicKey); err != nil {
		return Issued{}, err
	}
	candidates := IssuedTo(kind, role)
	if len(candidates) == 0 {
		return Issued{}, fmt.Errorf("a %s is issued no certificate by the %s CA", kind, role)
	}
	i := slices.IndexFunc(candidates, func(i Issued) bool { return subjectMatches(i, csr.Subject.CommonName, csr.Subject.Organization) })
	if i < 0 {
		return Issued{}, fmt.Errorf("the subject CN=%q O=%q is not one a %s is issued by the %s CA", csr.Subject.CommonName,
			csr.Subject.Organization, kind, role)
	}
	issued := candidates[i]
	for _, check := range []func(*x509.CertificateRequest, Issued, Declaration) error{checkSubjectAttributes, checkSANs, checkExtensions} {
		if err := check(csr, issued, d); err != nil {
			return Issued{}, fmt.Errorf("the %s certificate of a %s: %w", issued.Role, kind, err)
		}
	}
	return issued, nil
}

func checkKey(key any) error {
	switch k := key.(type) {
	case *ecdsa.PublicKey:
		if k.Curve == elliptic.P256() || k.Curve == elliptic.P384() {
			return nil
		}
		return fmt.Errorf("an ECDSA key on %s: only P-256 and P-384 are signed", k.Curve.Params().Name)
	case *rsa.PublicKey:
		if k.N.BitLen() >= MinRSABits {
			return nil
		}
		return fmt.Errorf("an RSA key of %d bits: at least %d are signed", k.N.BitLen(), MinRSABits)
	}
	return fmt.Errorf("a %T key: only ECDSA and RSA keys are signed", key)
}

// subjectMatches reports whether cn and o are the subject of i.
func subjectMatches(i Issued, cn string, o []string) bool {
	if i.User {
		return UserAllowed(cn, o) == nil
	}
	if !nameMatches(i.CommonName, cn) {
		return false
	}
	want, got := slices.Sorted(slices.Values(i.Organization)), slices.Sorted(slices.Values(o))
	return slices.Equal(want, got)
}

// nameMatches reports whether cn is pattern, with NamePlaceholder a DNS-1123 subdomain.
func nameMatches(pattern, cn string) bool {
	prefix, suffix, found := strings.Cut(pattern, NamePlaceholder)
	if !found {
		return cn == pattern
	}
	if len(cn) <= len(prefix)+len(suffix) || !strings.HasPrefix(cn, prefix) || !strings.HasSuffix(cn, suffix) {
		return false
	}
	return len(validation.IsDNS1123Subdomain(cn[len(prefix):len(cn)-len(suffix)])) == 0
}

// UserAllowed is the rule of a linked Kubeconfig's identity: a user name and groups that the
// home cannot check against the remote's rights, so none privileged: no name or group with
// the "system:" prefix (system:masters, kcp's system:kcp:…), and no group of a Kubeconfig's
// bindings (kubeconfig.GroupPrefix), which name the home's Kubeconfigs.
func UserAllowed(user string, groups []string) error {
	if user == "" {
		return fmt.Errorf("no user name")
	}
	if strings.HasPrefix(user, "system:") {
		return fmt.Errorf("the user %q is a system user", user)
	}
	for _, g := range groups {
		switch {
		case g == "":
			return fmt.Errorf("an empty group")
		case strings.HasPrefix(g, "system:"):
			return fmt.Errorf("the group %q is a system group", g)
		case strings.HasPrefix(g, kubeconfig.GroupPrefix):
			return fmt.Errorf("the group %q is the group of a Kubeconfig's bindings", g)
		}
	}
	return nil
}

// Subject attributes beside CN and O that a certificate template may set: kcp and
// Kubernetes read none of them.
var templateAttributes = []asn1.ObjectIdentifier{
	{2, 5, 4, 3},  // CN
	{2, 5, 4, 10}, // O
	{2, 5, 4, 11}, // OU
	{2, 5, 4, 6},  // C
	{2, 5, 4, 7},  // L
	{2, 5, 4, 8},  // ST
	{2, 5, 4, 9},  // street
	{2, 5, 4, 17}, // postal code
	{2, 5, 4, 5},  // serial number
}

// checkSubjectAttributes refuses attributes no certificate template sets, and more than one
// CN: crypto/x509 reads the last, another reader may read the first.
func checkSubjectAttributes(csr *x509.CertificateRequest, _ Issued, _ Declaration) error {
	cns := 0
	for _, n := range csr.Subject.Names {
		if !slices.ContainsFunc(templateAttributes, n.Type.Equal) {
			return fmt.Errorf("the subject attribute %s is not one a certificate carries", n.Type)
		}
		if n.Type.Equal(templateAttributes[0]) {
			cns++
		}
	}
	if cns > 1 {
		return fmt.Errorf("%d common names", cns)
	}
	return nil
}

func checkSANs(csr *x509.CertificateRequest, i Issued, d Declaration) error {
	if len(csr.URIs) > 0 || len(csr.EmailAddresses) > 0 {
		return fmt.Errorf("URI or e-mail SANs, which no certificate carries")
	}
	for _, ip := range csr.IPAddresses {
		if !slices.ContainsFunc(i.IPAddresses, func(a string) bool { return net.ParseIP(a).Equal(ip) }) {
			return fmt.Errorf("the IP SAN %s, which the certificate does not carry", ip)
		}
	}
	for _, name := range csr.DNSNames {
		if slices.Contains(i.DNSNames, name) {
			continue
		}
		if !i.Serving {
			return fmt.Errorf("the DNS SAN %q in a certificate that serves nothing", name)
		}
		if !slices.ContainsFunc(d.DNSNames, func(declared string) bool { return WithinDNSName(name, declared) }) {
			return fmt.Errorf("the DNS SAN %q, which is not within the Link's dnsNames", name)
		}
	}
	return nil
}

// WithinDNSName reports whether the DNS SAN name is covered by declared: equal, or, for a
// declared "*.suffix", one label followed by ".suffix". A wildcard name is covered only by
// the same wildcard.
func WithinDNSName(name, declared string) bool {
	name, declared = strings.ToLower(name), strings.ToLower(declared)
	if name == declared {
		return true
	}
	suffix, ok := strings.CutPrefix(declared, "*.")
	if !ok {
		return false
	}
	label, rest, ok := strings.Cut(name, ".")
	return ok && rest == suffix && label != "" && label != "*"
}

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
