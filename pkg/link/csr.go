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
