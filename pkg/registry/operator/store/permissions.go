package store

import (
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// ImagePermissions holds an image from another repository than kcp's to what it is: running
// code of the author's choice in the namespace, which only an author who may create the
// Deployment may ask for. Any tag of kcp's own repository is kcp's code, which a setup is for.
func ImagePermissions(image *operator.ImageSpec, fldPath *field.Path) []Permission {
	if image == nil || image.Repository == "" || image.Repository == operatorv1alpha1.DefaultImageRepository {
		return nil
	}
	return []Permission{{
		Field: fldPath.Child("repository").String(), Value: image.Repository,
		Verb: "create", Group: "apps", Resource: "deployments",
	}}
}

// CertificatesPermissions holds where a setup's root CA comes from to what the author could
// use directly: an Issuer or ClusterIssuer to creating certificates.cert-manager.io, since the
// server has it sign on the author's behalf, and a CA Secret to reading that Secret, since the
// server signs with its key.
func CertificatesPermissions(certs *operator.Certificates, fldPath *field.Path) []Permission {
	if certs == nil {
		return nil
	}
	var perms []Permission
	if ref := certs.IssuerRef; ref != nil {
		perms = append(perms, Permission{
			Field: fldPath.Child("issuerRef").String(), Value: ref.Kind + "/" + ref.Name,
			Verb: "create", Group: cmv1.SchemeGroupVersion.Group, Resource: "certificates",
		})
	}
	if ref := certs.CASecretRef; ref != nil {
		perms = append(perms, Permission{
			Field: fldPath.Child("caSecretRef").String(), Value: "Secret/" + ref.Name,
			Verb: "get", Resource: "secrets", Name: ref.Name,
		})
	}
	return perms
}
