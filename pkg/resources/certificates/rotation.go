package certificates

import (
	"slices"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// RotatingCA builds a rotatable CA (docs/rotation.md): the Certificate of each of its live
// slots, in slot order, each a CA of its own with its own key, and the CA's Issuer, which
// keeps the CA's name and signs from slots.Issuer. Without a rotation it is the CA's
// Certificate and Issuer as ever.
func RotatingCA(spec Spec, slots pki.Slots) ([]*cmapply.CertificateApplyConfiguration, *cmapply.IssuerApplyConfiguration) {
	var certs []*cmapply.CertificateApplyConfiguration
	live := slices.Clone(slots.Live)
	slices.Sort(live)
	for _, slot := range live {
		s := spec
		s.Name = pki.SlotName(spec.Name, slot)
		s.CommonName = s.Name
		certs = append(certs, Certificate(s))
	}
	return certs, CAIssuer(spec.Namespace, spec.Name, pki.SlotName(spec.Name, slots.Issuer), spec.Labels)
}

// TrustBundle builds the Secret <ca>-trust (pki.TrustSecret) of a rotated CA whose Issuer is
// base: the PEM of its live slots' certificates, in slot order.
func TrustBundle(namespace, base string, labels map[string]string, pems ...[]byte) *corev1ac.SecretApplyConfiguration {
	return BundleSecret(namespace, base+pki.TrustSuffix, labels, pems...)
}

// RotatingRootCA is RootCA with its CA in slots (RotatingCA): a CacheServer's CA or a
// RootShard's root CA, from the namespace bootstrap or the user's issuer. A CA the user brings (caSecretRef) is not ours to
// rotate, and stays as RootCA builds it.
func RotatingRootCA(namespace, name string, labels map[string]string, c *operatorv1alpha1.Certificates, tmpl *operatorv1alpha1.CertificateTemplate, slots pki.Slots) Objects {
	out := RootCA(namespace, name, labels, c, tmpl)
	if c != nil && c.CASecretRef != nil {
		return out
	}
	issuer := LocalIssuer(pki.BootstrapCA)
	if c != nil && c.IssuerRef != nil {
		issuer = Issuer{Name: c.IssuerRef.Name, Kind: c.IssuerRef.Kind, Group: c.IssuerRef.Group}
	}
	certs, caIssuer := RotatingCA(CA(namespace, name, labels, issuer, tmpl), slots)
	out.Certificates = slices.DeleteFunc(out.Certificates, func(c *cmapply.CertificateApplyConfiguration) bool { return *c.Name == name })
	out.Certificates = append(out.Certificates, certs...)
	for i, is := range out.Issuers {
		if *is.Name == name {
			out.Issuers[i] = caIssuer
		}
	}
	return out
}
