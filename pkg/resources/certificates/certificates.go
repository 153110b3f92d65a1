// Package certificates builds cert-manager Certificates and Issuers as server-side apply
// configurations, for every kind's builders: CAs, CA issuers and leaves, with the user's
// certificate template merged in. It is pure: no I/O.
package certificates

import (
	"maps"
	"slices"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	cmmetaapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Issuer names the cert-manager issuer that signs a certificate.
type Issuer struct {
	Name  string
	Kind  string
	Group string
}

// LocalIssuer is an Issuer in the certificate's namespace.
func LocalIssuer(name string) Issuer {
	return Issuer{Name: name, Kind: cmv1.IssuerKind, Group: "cert-manager.io"}
}

// Spec is a certificate to build.
type Spec struct {
	Namespace    string
	Name         string
	Labels       map[string]string
	Issuer       Issuer
	IsCA         bool
	CommonName   string
	Organization []string
	DNSNames     []string
	IPAddresses  []string
	// URIs are URI SANs: a template's names never replace them.
	URIs   []string
	Usages []cmv1.KeyUsage
	// KeepsKey renews the certificate with its key (pki.SigningRotation): a signing key,
	// which verifiers know by itself.
	KeepsKey bool
	// Template is the user's template for the certificate's role, if any.
	Template *operatorv1alpha1.CertificateTemplate
}

// CA is the Spec of a CA certificate with the default CA lifetime.
func CA(namespace, name string, labels map[string]string, issuer Issuer, tmpl *operatorv1alpha1.CertificateTemplate) Spec {
	return Spec{Namespace: namespace, Name: name, Labels: labels, Issuer: issuer, IsCA: true, CommonName: name,
		Usages: pki.CAKeyUsages, Template: tmpl}
}

// Leaf is the Spec of a leaf certificate of the PKI.
func Leaf(namespace string, leaf pki.Leaf, labels map[string]string, tmpl *operatorv1alpha1.CertificateTemplate) Spec {
	return Spec{Namespace: namespace, Name: leaf.Name, Labels: labels, Issuer: LocalIssuer(leaf.Issuer),
		CommonName: leaf.CommonName, Organization: leaf.Organization, DNSNames: leaf.DNSNames, IPAddresses: leaf.IPAddresses,
		URIs: leaf.URIs, Usages: leaf.Usage.KeyUsages(), KeepsKey: leaf.Usage == pki.Signing, Template: tmpl}
}

// Certificate builds the Certificate of spec; its Secret has the same name. A template's
// issuerRef replaces spec's issuer, and then its dnsNames and ipAddresses, when it has any,
// replace the generated subject alternative names.
func Certificate(spec Spec) *cmapply.CertificateApplyConfiguration {
	duration, renewBefore, rotation := pki.LeafDuration, &pki.LeafRenewBefore, pki.DefaultRotation
	if spec.IsCA {
		duration, renewBefore, rotation = pki.CADuration, &pki.CARenewBefore, pki.CARotation
	}
	if spec.KeepsKey {
		rotation = pki.SigningRotation
	}
	labels := maps.Clone(spec.Labels)
	secretLabels := maps.Clone(spec.Labels)
	annotations, secretAnnotations := map[string]string{}, map[string]string{}
	issuer := spec.Issuer
	dnsNames := slices.Clone(spec.DNSNames)
	ipAddresses := slices.Clone(spec.IPAddresses)
	key := cmapply.CertificatePrivateKey().
		WithAlgorithm(pki.DefaultAlgorithm).WithSize(pki.DefaultKeySize).
		WithEncoding(pki.DefaultKeyEncoded).WithRotationPolicy(rotation)
	subject := cmapply.X509Subject()
	if len(spec.Organization) > 0 {
		subject.WithOrganizations(spec.Organization...)
	}

	if t := spec.Template; t != nil {
		if t.Metadata != nil {
			// Our labels win: the controllers find their objects by them.
			labels = merged(t.Metadata.Labels, labels)
			annotations = merged(t.Metadata.Annotations, annotations)
		}
		if s := t.Spec; s != nil {
			if s.Subject != nil {
				mergeSubject(subject, s.Subject)
			}
			if s.IssuerRef != nil {
				issuer = Issuer{Name: s.IssuerRef.Name, Kind: s.IssuerRef.Kind, Group: s.IssuerRef.Group}
			}
			if s.IssuerRef != nil && (len(s.DNSNames) > 0 || len(s.IPAddresses) > 0) {
				// Another issuer may refuse names it cannot vouch for (a public ACME issuer
				// refuses cluster-internal ones), so the user's names replace ours, as in
				// kcp-operator. Without names of the user's, ours are all there is.
				dnsNames, ipAddresses = slices.Clone(s.DNSNames), slices.Clone(s.IPAddresses)
			} else {
				dnsNames = append(dnsNames, s.DNSNames...)
				ipAddresses = append(ipAddresses, s.IPAddresses...)
			}
			if s.Duration != nil {
				duration = *s.Duration
				// The default renewBefore is meant for the default duration and may exceed
				// another; without one, cert-manager renews at a third of the lifetime left.
				renewBefore = nil
			}
			if s.RenewBefore != nil {
				renewBefore = s.RenewBefore
			}
			if pk := s.PrivateKey; pk != nil {
				mergePrivateKey(key, pk)
			}
			if st := s.SecretTemplate; st != nil {
				secretLabels = merged(st.Labels, secretLabels)
				secretAnnotations = merged(st.Annotations, secretAnnotations)
			}
		}
	}

	certSpec := cmapply.CertificateSpec().
		WithSecretName(spec.Name).
		WithCommonName(spec.CommonName).
		WithIssuerRef(cmmetaapply.IssuerReference().WithName(issuer.Name).WithKind(issuer.Kind).WithGroup(issuer.Group)).
		WithDuration(duration).
		WithUsages(spec.Usages...).
		WithPrivateKey(key).
		WithSecretTemplate(secretTemplate(secretLabels, secretAnnotations)).
		WithRevisionHistoryLimit(1)
	if renewBefore != nil {
		certSpec.WithRenewBefore(*renewBefore)
	}
	if spec.IsCA {
		certSpec.WithIsCA(true)
	}
	if subject.Organizations != nil || subject.Countries != nil || subject.OrganizationalUnits != nil ||
		subject.Localities != nil || subject.Provinces != nil || subject.StreetAddresses != nil ||
		subject.PostalCodes != nil || subject.SerialNumber != nil {
		certSpec.WithSubject(subject)
	}
	if len(dnsNames) > 0 {
		certSpec.WithDNSNames(dedupe(dnsNames)...)
	}
	if len(ipAddresses) > 0 {
		certSpec.WithIPAddresses(dedupe(ipAddresses)...)
	}
	if len(spec.URIs) > 0 {
		certSpec.WithURIs(spec.URIs...)
	}
	cert := cmapply.Certificate(spec.Name, spec.Namespace).WithLabels(labels).WithSpec(certSpec)
	if len(annotations) > 0 {
		cert.WithAnnotations(annotations)
	}
	return cert
}

// CAIssuer builds the Issuer backed by a CA's Secret.
func CAIssuer(namespace, name, secretName string, labels map[string]string) *cmapply.IssuerApplyConfiguration {
	return cmapply.Issuer(name, namespace).WithLabels(labels).
		WithSpec(cmapply.IssuerSpec().WithCA(cmapply.CAIssuer().WithSecretName(secretName)))
}

// SelfSignedIssuer builds a self-signed Issuer.
func SelfSignedIssuer(namespace, name string, labels map[string]string) *cmapply.IssuerApplyConfiguration {
	return cmapply.Issuer(name, namespace).WithLabels(labels).
		WithSpec(cmapply.IssuerSpec().WithSelfSigned(cmapply.SelfSignedIssuer()))
}

func mergeSubject(dst *cmapply.X509SubjectApplyConfiguration, s *operatorv1alpha1.X509Subject) {
	dst.WithOrganizations(s.Organizations...).WithCountries(s.Countries...).
		WithOrganizationalUnits(s.OrganizationalUnits...).WithLocalities(s.Localities...).
		WithProvinces(s.Provinces...).WithStreetAddresses(s.StreetAddresses...).WithPostalCodes(s.PostalCodes...)
	if s.SerialNumber != "" {
		dst.WithSerialNumber(s.SerialNumber)
	}
}

func mergePrivateKey(dst *cmapply.CertificatePrivateKeyApplyConfiguration, pk *operatorv1alpha1.CertificatePrivateKeyTemplate) {
	if pk.Algorithm != "" {
		dst.WithAlgorithm(cmv1.PrivateKeyAlgorithm(pk.Algorithm))
		// A size chosen for the default algorithm means nothing for another one.
		dst.Size = nil
	}
	if pk.KeySize != 0 {
		dst.WithSize(int(pk.KeySize))
	}
	if pk.Encoding != "" {
		dst.WithEncoding(cmv1.PrivateKeyEncoding(pk.Encoding))
	}
	if pk.RotationPolicy != "" {
		dst.WithRotationPolicy(cmv1.PrivateKeyRotationPolicy(pk.RotationPolicy))
	}
}

// merged returns base with over's entries on top.
func merged(base, over map[string]string) map[string]string {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, over)
	return out
}

func dedupe(values []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(values))
	for _, v := range values {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// secretTemplate labels the certificate's Secret like the certificate, so that the
// controllers find and delete it too.
func secretTemplate(labels, annotations map[string]string) *cmapply.CertificateSecretTemplateApplyConfiguration {
	t := cmapply.CertificateSecretTemplate().WithLabels(labels)
	if len(annotations) > 0 {
		t.WithAnnotations(annotations)
	}
	return t
}
