package kubeconfig

import (
	"slices"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
)

// Certificate builds the Certificate of the Kubeconfig's identity (docs/PKI.md, kubeconfig-<kc>):
// CN spec.username and O spec.groups, plus Group when spec.authorization is set, for client
// auth, signed by the target RootShard's front-proxy-client CA, lasting spec.validity, with
// spec.certificateTemplate merged in. Its Secret has the same name and carries the owner
// label, so that deletion finds it.
func (k Kubeconfig) Certificate() *cmapply.CertificateApplyConfiguration {
	return certificates.Certificate(certificates.Spec{
		Namespace:    k.Namespace,
		Name:         k.CertificateName(),
		Labels:       k.labels(CertificateComponent),
		Issuer:       certificates.LocalIssuer(k.Target.SignerIssuer()),
		CommonName:   k.Spec.Username,
		Organization: k.groups(),
		Usages:       pki.ClientAuth.KeyUsages(),
		Template:     k.template(),
	})
}

// groups are the certificate's organizations: spec.groups, and the group the Kubeconfig's
// ClusterRoleBindings name when spec.authorization is set. Only then: a credential issued
// while none were bound does not gain the roles bound later. (kcp-operator adds it always.)
func (k Kubeconfig) groups() []string {
	if k.Spec.Authorization == nil || slices.Contains(k.Spec.Groups, Group(k.Kubeconfig)) {
		return k.Spec.Groups
	}
	return append(slices.Clone(k.Spec.Groups), Group(k.Kubeconfig))
}

// template is spec.certificateTemplate with Validity as its duration: validity is the
// Kubeconfig's lifetime, whatever the template says. A duration in the template also keeps
// certificates.Certificate from setting the 7-day leaf renewBefore, which would exceed a
// short validity; so renewBefore is the template's when it has one, else cert-manager's
// default of a third of the lifetime.
//
// The template's subject organizations are dropped, which validation refuses anyway: kcp
// reads them as groups, and the groups of a Kubeconfig are spec.groups alone, which the API
// server checks against what the creator may impersonate.
func (k Kubeconfig) template() *operatorv1alpha1.CertificateTemplate {
	t := &operatorv1alpha1.CertificateTemplate{}
	if k.Spec.CertificateTemplate != nil {
		t = k.Spec.CertificateTemplate.DeepCopy()
	}
	if t.Spec == nil {
		t.Spec = &operatorv1alpha1.CertificateSpecTemplate{}
	}
	t.Spec.Duration = &metav1.Duration{Duration: k.Validity()}
	if t.Spec.Subject != nil {
		t.Spec.Subject.Organizations = nil
	}
	return t
}
