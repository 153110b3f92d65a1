package validation

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// The certificate roles each kind generates, the allowed keys of its certificateTemplates.
// They are sorted, as they appear in error messages.
var (
	// RootShardCertificateRoles are the certificates of a RootShard, including the CAs of a setup.
	RootShardCertificateRoles = []string{
		"client", "client-ca", "etcd-client", "etcd-client-ca", "etcd-peer", "etcd-peer-ca", "etcd-server",
		"external-logical-cluster-admin", "front-proxy-client-ca", "kcp-operator",
		"link-ca", "logical-cluster-admin", "mounts-proxy", "requestheader-client-ca", "root-ca", "server", "server-ca",
		"service-account", "service-account-ca",
	}
	// ShardCertificateRoles are the certificates of a Shard.
	ShardCertificateRoles = []string{
		"client", "etcd-client", "etcd-peer", "etcd-server", "external-logical-cluster-admin", "logical-cluster-admin",
		"mounts-proxy", "server", "service-account",
	}
	// FrontProxyCertificateRoles are the certificates of a FrontProxy.
	FrontProxyCertificateRoles = []string{"kubeconfig", "requestheader", "server"}
	// CacheServerCertificateRoles are the certificates of a CacheServer. "root-ca" is
	// kcp-operator's name for what this server calls "ca".
	CacheServerCertificateRoles = []string{"ca", "client", "root-ca", "server"}
	// VirtualWorkspaceCertificateRoles are the certificates of a VirtualWorkspace: its
	// serving certificate and its client certificate toward its shard.
	VirtualWorkspaceCertificateRoles = []string{"client", "server"}
)

// Why kcp-operator's keys that a kind accepts and does not use have no effect, and what to
// use instead.
const (
	virtualWorkspacesRoleElsewhere = "templates kcp-operator's <name>-virtual-workspaces certificate, which no pod of kcp-operator's mounts; " +
		"kcp-setups does not issue it, so the template has no effect. A standalone virtual-workspaces server is a VirtualWorkspace object here, " +
		"whose certificates are templated in its own spec.certificateTemplates (keys \"server\" and \"client\"); " +
		"a shard without one serves its virtual workspaces in process, with its server certificate"
)

// certificateRoles are what a kind's certificateTemplates may hold.
type certificateRoles struct {
	// roles are the keys of the kind's certificates.
	roles []string
	// ignored are kcp-operator's keys the kind accepts without effect, with why: certificates
	// that another kind templates here. Any other key that is not a role is ignored too, as
	// kcp-operator ignores it, with a warning.
	ignored map[string]string
	// rootCA are the keys of the kind's root CA, whose issuer spec.certificates names.
	rootCA []string
	// aliases are pairs of keys that name the same certificate: one or the other.
	aliases [][2]string
	// keepsKey are the keys of the certificates that keep their key (validateKeptKeys).
	keepsKey []string
}

// The certificateTemplates rules of each kind.
var (
	rootShardTemplates = certificateRoles{roles: RootShardCertificateRoles, rootCA: []string{"root-ca"},
		ignored: map[string]string{"virtual-workspaces": virtualWorkspacesRoleElsewhere}, keepsKey: rootShardKeptKeys}
	shardTemplates = certificateRoles{roles: ShardCertificateRoles,
		ignored: map[string]string{"virtual-workspaces": virtualWorkspacesRoleElsewhere}, keepsKey: shardKeptKeys}
	frontProxyTemplates  = certificateRoles{roles: FrontProxyCertificateRoles}
	cacheServerTemplates = certificateRoles{roles: CacheServerCertificateRoles, rootCA: []string{"ca", "root-ca"},
		aliases: [][2]string{{"ca", "root-ca"}}, keepsKey: cacheServerKeptKeys}
	virtualWorkspaceTemplates = certificateRoles{roles: VirtualWorkspaceCertificateRoles}
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
	allErrs = append(allErrs, validateIssuerRef(certs.IssuerRef, fldPath.Child("issuerRef"))...)
	allErrs = append(allErrs, validateSecretReference(certs.CASecretRef, fldPath.Child("caSecretRef"))...)
	return allErrs
}

// validateIssuerRef checks a reference to a cert-manager issuer: an external issuer's group is
// its API group, a DNS subdomain.
func validateIssuerRef(ref *operator.ObjectReference, fldPath *field.Path) field.ErrorList {
	if ref == nil {
		return nil
	}
	allErrs := validateDNS1123SubdomainName(ref.Name, fldPath.Child("name"))
	if !slices.Contains(issuerKinds, ref.Kind) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("kind"), ref.Kind, issuerKinds))
	}
	return append(allErrs, validateDNS1123SubdomainName(ref.Group, fldPath.Child("group"))...)
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

// validateCertificateTemplates checks a kind's certificate templates, each at its key. A key
// that names no certificate of the kind is accepted and ignored, as kcp-operator ignores it;
// certificateTemplateWarnings says so, so that a typo does not go unnoticed.
func validateCertificateTemplates(templates operator.CertificateTemplateMap, roles certificateRoles, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, key := range slices.Sorted(maps.Keys(templates)) {
		keyPath := fldPath.Key(key)
		tmpl := templates[key]
		allErrs = append(allErrs, validateCertificateTemplate(&tmpl, keyPath)...)
		if slices.Contains(roles.rootCA, key) && tmpl.Spec != nil && tmpl.Spec.IssuerRef != nil {
			// The root CA's source is immutable (validateCertificatesUpdate): a template
			// could change it behind that rule's back.
			allErrs = append(allErrs, field.Forbidden(keyPath.Child("spec", "issuerRef"),
				"the root CA is issued as spec.certificates says: set spec.certificates.issuerRef instead"))
		}
	}
	for _, pair := range roles.aliases {
		_, first := templates[pair[0]]
		_, second := templates[pair[1]]
		if first && second {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(pair[1]),
				fmt.Sprintf("may not be set together with %q: both name the same certificate", pair[0])))
		}
	}
	return allErrs
}

// certificateTemplateWarnings say which keys of a kind's certificate templates have no
// effect: kcp-operator's keys of certificates this server does not issue, and keys that name
// no certificate at all, such as a typo.
func certificateTemplateWarnings(templates operator.CertificateTemplateMap, roles certificateRoles, fldPath *field.Path) []string {
	var warnings []string
	for _, key := range slices.Sorted(maps.Keys(templates)) {
		if why, ok := roles.ignored[key]; ok {
			warnings = append(warnings, fmt.Sprintf("%s has no effect: %q %s", fldPath.Key(key), key, why))
		} else if !slices.Contains(roles.roles, key) {
			warnings = append(warnings, fmt.Sprintf("%s has no effect: %q names no certificate here and is ignored, as kcp-operator ignores it; the keys are %s",
				fldPath.Key(key), key, quoteList(roles.roles)))
		}
	}
	return warnings
}

// quoteList renders ["a", "b"] as `"a", "b"`.
func quoteList(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = strconv.Quote(v)
	}
	return strings.Join(quoted, ", ")
}
