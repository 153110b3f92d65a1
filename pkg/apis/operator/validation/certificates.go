package validation

import (
	"fmt"
	"maps"
	"slices"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// The certificate roles each kind generates, the allowed keys of its certificateTemplates.
// They are sorted, as they appear in error messages.
var (
	// RootShardCertificateRoles are the certificates of a RootShard, including the CAs of a setup.
	RootShardCertificateRoles = []string{
		"client", "client-ca", "external-logical-cluster-admin", "front-proxy-client-ca",
		"logical-cluster-admin", "requestheader-client-ca", "root-ca", "server", "server-ca",
		"service-account", "service-account-ca",
	}
	// ShardCertificateRoles are the certificates of a Shard.
	ShardCertificateRoles = []string{
		"client", "external-logical-cluster-admin", "logical-cluster-admin", "server", "service-account",
	}
	// FrontProxyCertificateRoles are the certificates of a FrontProxy.
	FrontProxyCertificateRoles = []string{"kubeconfig", "requestheader", "server"}
	// CacheServerCertificateRoles are the certificates of a CacheServer.
	CacheServerCertificateRoles = []string{"ca", "client", "server"}
)

// issuerKinds are the cert-manager issuer kinds an issuerRef may name.
var issuerKinds = []string{cmv1.ClusterIssuerKind, cmv1.IssuerKind}

// validateCertificates checks where a setup's root CA comes from.
func validateCertificates(certs *operator.Certificates, fldPath *field.Path) field.ErrorList {
	if certs == nil {
		// The namespace bootstrap PKI is used.
		return nil
	}
	var allErrs field.ErrorList
	switch {
	case certs.IssuerRef == nil && certs.CASecretRef == nil:
		allErrs = append(allErrs, field.Required(fldPath, "one of issuerRef or caSecretRef is required"))
	case certs.IssuerRef != nil && certs.CASecretRef != nil:
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("caSecretRef"), "may not be set together with issuerRef"))
	}
	if ref := certs.IssuerRef; ref != nil {
		refPath := fldPath.Child("issuerRef")
		allErrs = append(allErrs, validateDNS1123SubdomainName(ref.Name, refPath.Child("name"))...)
		if !slices.Contains(issuerKinds, ref.Kind) {
			allErrs = append(allErrs, field.NotSupported(refPath.Child("kind"), ref.Kind, issuerKinds))
		}
		allErrs = append(allErrs, validateDNS1123SubdomainName(ref.Group, refPath.Child("group"))...)
	}
	allErrs = append(allErrs, validateSecretReference(certs.CASecretRef, fldPath.Child("caSecretRef"))...)
	return allErrs
}

// validateCertificatesUpdate rejects a change of the root CA source: every certificate of the
// setup chains up to it, so switching would orphan them.
func validateCertificatesUpdate(newCerts, oldCerts *operator.Certificates, fldPath *field.Path) field.ErrorList {
	return validateImmutable(newCerts, oldCerts, describeCertificates(newCerts), fldPath)
}

// describeCertificates renders a Certificates for an error message.
func describeCertificates(certs *operator.Certificates) string {
	switch {
	case certs == nil:
		return "bootstrap PKI"
	case certs.IssuerRef != nil:
		return fmt.Sprintf("issuerRef %s/%s", certs.IssuerRef.Kind, certs.IssuerRef.Name)
	case certs.CASecretRef != nil:
		return "caSecretRef " + certs.CASecretRef.Name
	default:
		return ""
	}
}

// validateCertificateTemplates checks a kind's certificate templates. A key that names no
// certificate of the kind would be silently ignored, so it is rejected.
func validateCertificateTemplates(templates operator.CertificateTemplateMap, roles []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, key := range slices.Sorted(maps.Keys(templates)) {
		if !slices.Contains(roles, key) {
			allErrs = append(allErrs, field.NotSupported(fldPath, key, roles))
		}
		tmpl := templates[key]
		allErrs = append(allErrs, validateCertificateTemplate(&tmpl, fldPath.Key(key))...)
	}
	return allErrs
}
