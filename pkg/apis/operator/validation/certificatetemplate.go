package validation

import (
	"fmt"
	"slices"
	"strings"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// Bounds on certificate lifetimes. Shorter ones would have cert-manager reissue certificates
// faster than the components pick them up.
const (
	minCertificateDuration    = time.Hour
	minCertificateRenewBefore = 5 * time.Minute
)

var (
	keyAlgorithms       = []cmv1.PrivateKeyAlgorithm{cmv1.RSAKeyAlgorithm, cmv1.ECDSAKeyAlgorithm, cmv1.Ed25519KeyAlgorithm}
	keyEncodings        = []cmv1.PrivateKeyEncoding{cmv1.PKCS1, cmv1.PKCS8}
	keyRotationPolicies = []cmv1.PrivateKeyRotationPolicy{cmv1.RotationPolicyNever, cmv1.RotationPolicyAlways}

	// keySizes are the sizes cert-manager accepts per algorithm. An empty algorithm means the
	// server's default for generated certificates, ECDSA.
	keySizes = map[cmv1.PrivateKeyAlgorithm][]int32{
		"":                       {256, 384, 521},
		cmv1.ECDSAKeyAlgorithm:   {256, 384, 521},
		cmv1.RSAKeyAlgorithm:     {2048, 4096, 8192},
		cmv1.Ed25519KeyAlgorithm: {},
	}
)

// validateCertificateTemplate checks a template merged into a generated cert-manager
// Certificate, so that cert-manager never rejects the merged result.
func validateCertificateTemplate(tmpl *operator.CertificateTemplate, fldPath *field.Path) field.ErrorList {
	if tmpl == nil {
		return nil
	}
	allErrs := validateMetadataTemplate(tmpl.Metadata, fldPath.Child("metadata"))
	if spec := tmpl.Spec; spec != nil {
		specPath := fldPath.Child("spec")
		allErrs = append(allErrs, validateX509Subject(spec.Subject, specPath.Child("subject"))...)
		allErrs = append(allErrs, validateDNSNames(spec.DNSNames, specPath.Child("dnsNames"))...)
		allErrs = append(allErrs, validateIPAddresses(spec.IPAddresses, specPath.Child("ipAddresses"))...)
		allErrs = append(allErrs, validateMinDuration(spec.Duration, minCertificateDuration, specPath.Child("duration"))...)
		allErrs = append(allErrs, validateRenewBefore(spec, specPath.Child("renewBefore"))...)
		allErrs = append(allErrs, validatePrivateKey(spec.PrivateKey, specPath.Child("privateKey"))...)
		allErrs = append(allErrs, validateMetadataTemplate(spec.SecretTemplate, specPath.Child("secretTemplate"))...)
		allErrs = append(allErrs, validateIssuerRef(spec.IssuerRef, specPath.Child("issuerRef"))...)
	}
	return allErrs
}

// validateX509Subject rejects empty attributes, which would put empty RDNs in the subject.
func validateX509Subject(subject *operator.X509Subject, fldPath *field.Path) field.ErrorList {
	if subject == nil {
		return nil
	}
	var allErrs field.ErrorList
	for _, attr := range []struct {
		name   string
		values []string
	}{
		{"organizations", subject.Organizations},
		{"countries", subject.Countries},
		{"organizationalUnits", subject.OrganizationalUnits},
		{"localities", subject.Localities},
		{"provinces", subject.Provinces},
		{"streetAddresses", subject.StreetAddresses},
		{"postalCodes", subject.PostalCodes},
	} {
		for i, v := range attr.values {
			if v == "" {
				allErrs = append(allErrs, field.Required(fldPath.Child(attr.name).Index(i), ""))
			}
		}
	}
	return allErrs
}

// validateDNSNames checks subject alternative names; a leading "*." wildcard is allowed.
func validateDNSNames(names []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, name := range names {
		idxPath := fldPath.Index(i)
		switch {
		case name == "":
			allErrs = append(allErrs, field.Required(idxPath, ""))
		case strings.HasPrefix(name, "*."):
			allErrs = append(allErrs, invalidForEach(idxPath, name, validation.IsWildcardDNS1123Subdomain(name))...)
		default:
			allErrs = append(allErrs, invalidForEach(idxPath, name, validation.IsDNS1123Subdomain(name))...)
		}
	}
	return allErrs
}

// validateIPAddresses checks IP subject alternative names.
func validateIPAddresses(ips []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ip := range ips {
		if ip == "" {
			allErrs = append(allErrs, field.Required(fldPath.Index(i), ""))
			continue
		}
		allErrs = append(allErrs, validation.IsValidIP(fldPath.Index(i), ip)...)
	}
	return allErrs
}

// validateRenewBefore checks that renewal starts late enough to be useful and before expiry.
func validateRenewBefore(spec *operator.CertificateSpecTemplate, fldPath *field.Path) field.ErrorList {
	renewBefore := spec.RenewBefore
	if renewBefore == nil {
		return nil
	}
	if renewBefore.Duration < minCertificateRenewBefore {
		return validateMinDuration(renewBefore, minCertificateRenewBefore, fldPath)
	}
	if spec.Duration != nil && renewBefore.Duration >= spec.Duration.Duration {
		return field.ErrorList{field.Invalid(fldPath, renewBefore.Duration.String(),
			fmt.Sprintf("must be less than duration (%s)", spec.Duration.Duration))}
	}
	return nil
}

// validatePrivateKey checks the private key settings against what cert-manager supports.
func validatePrivateKey(key *operator.CertificatePrivateKeyTemplate, fldPath *field.Path) field.ErrorList {
	if key == nil {
		return nil
	}
	var allErrs field.ErrorList
	algorithm := cmv1.PrivateKeyAlgorithm(key.Algorithm)
	sizes, knownAlgorithm := keySizes[algorithm]
	if !knownAlgorithm {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("algorithm"), key.Algorithm, keyAlgorithms))
	}
	// Size 0 means the algorithm's default; with an unknown algorithm there is nothing to
	// check the size against.
	if key.KeySize != 0 && knownAlgorithm && !slices.Contains(sizes, key.KeySize) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("size"), key.KeySize, keySizeMessage(algorithm, sizes)))
	}
	if enc := cmv1.PrivateKeyEncoding(key.Encoding); enc != "" && !slices.Contains(keyEncodings, enc) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("encoding"), key.Encoding, keyEncodings))
	}
	if policy := cmv1.PrivateKeyRotationPolicy(key.RotationPolicy); policy != "" && !slices.Contains(keyRotationPolicies, policy) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("rotationPolicy"), key.RotationPolicy, keyRotationPolicies))
	}
	return allErrs
}

// keySizeMessage names the sizes allowed for an algorithm.
func keySizeMessage(algorithm cmv1.PrivateKeyAlgorithm, sizes []int32) string {
	if algorithm == "" {
		algorithm = cmv1.ECDSAKeyAlgorithm + " (the default algorithm)"
	}
	if len(sizes) == 0 {
		return fmt.Sprintf("must be 0 (unset) for algorithm %s", algorithm)
	}
	strs := make([]string, len(sizes))
	for i, s := range sizes {
		strs[i] = fmt.Sprint(s)
	}
	return fmt.Sprintf("must be 0 (the default) or one of %s for algorithm %s", strings.Join(strs, ", "), algorithm)
}
