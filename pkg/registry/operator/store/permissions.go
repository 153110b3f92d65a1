package store

import (
	"maps"
	"slices"
	"strings"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// ComponentPermissions holds what every component's spec may ask beyond a ClusterIP Service
// and pods of kcp's image to what it is. An image from another repository runs code of the
// author's choice in the namespace, which only an author who may create the Deployment may
// ask for; any tag of kcp's own repository is kcp's code, which a setup is for. A NodePort or
// LoadBalancer Service opens the setup beyond the cluster, which only an author who may
// create Services may ask for.
func ComponentPermissions(spec *operator.ComponentSpec, fldPath *field.Path) []Permission {
	perms := ImagePermissions(spec.Image, fldPath.Child("image"))
	if t := spec.ServiceTemplate; t != nil && t.Spec != nil && t.Spec.Type != "" && t.Spec.Type != corev1.ServiceTypeClusterIP {
		perms = append(perms, Permission{
			Field: fldPath.Child("serviceTemplate", "spec", "type").String(), Value: string(t.Spec.Type),
			Verb: "create", Resource: "services",
		})
	}
	perms = append(perms, VolumesPermissions(spec.ExtraVolumes, fldPath.Child("extraVolumes"))...)
	return append(perms, CertificateTemplatesPermissions(spec.CertificateTemplates, fldPath.Child("certificateTemplates"))...)
}

// ImagePermissions holds an image from another repository than kcp's to creating
// Deployments: it runs code of the author's choice in the namespace (ComponentPermissions).
func ImagePermissions(image *operator.ImageSpec, fldPath *field.Path) []Permission {
	if image == nil || image.Repository == "" || image.Repository == operatorv1alpha1.DefaultImageRepository {
		return nil
	}
	return []Permission{runPermission(fldPath.Child("repository"), image.Repository)}
}

// CommandPermissions holds a container's command to creating Deployments: whatever the image,
// a command of the author's choice runs a binary of the author's choice with the identities
// the server mounts into the container, which only a Deployment's author could otherwise do.
func CommandPermissions(command []string, fldPath *field.Path) []Permission {
	if len(command) == 0 {
		return nil
	}
	return []Permission{runPermission(fldPath, strings.Join(command, " "))}
}

// runPermission is create on Deployments, for a field that chooses what a pod runs.
func runPermission(fld *field.Path, value string) Permission {
	return Permission{Field: fld.String(), Value: value, Verb: "create", Group: "apps", Resource: "deployments"}
}

// SecretPermissions holds a Secret a field names to reading it: the server mounts it into the
// component's pods, where it could be read back through the component.
func SecretPermissions(ref *corev1.LocalObjectReference, fldPath *field.Path) []Permission {
	if ref == nil {
		return nil
	}
	return []Permission{readPermission(fldPath, "secrets", ref.Name)}
}

// VolumesPermissions holds the Secrets and ConfigMaps that extra volumes name to reading
// them: the server puts them into pods the author could otherwise not have read them into.
func VolumesPermissions(volumes []corev1.Volume, fldPath *field.Path) []Permission {
	var perms []Permission
	for i, v := range volumes {
		idx := fldPath.Index(i)
		if v.Secret != nil {
			perms = append(perms, readPermission(idx.Child("secret", "secretName"), "secrets", v.Secret.SecretName))
		}
		if v.ConfigMap != nil {
			perms = append(perms, readPermission(idx.Child("configMap", "name"), "configmaps", v.ConfigMap.Name))
		}
		if v.Projected == nil {
			continue
		}
		for j, src := range v.Projected.Sources {
			srcPath := idx.Child("projected", "sources").Index(j)
			if src.Secret != nil {
				perms = append(perms, readPermission(srcPath.Child("secret", "name"), "secrets", src.Secret.Name))
			}
			if src.ConfigMap != nil {
				perms = append(perms, readPermission(srcPath.Child("configMap", "name"), "configmaps", src.ConfigMap.Name))
			}
		}
	}
	return perms
}

// ShardConfigPermissions holds the Secrets and ConfigMaps a shard's etcd, audit and
// authorization settings name to reading them: the server mounts them into the shard's pods.
func ShardConfigPermissions(spec *operator.CommonShardSpec, fldPath *field.Path) []Permission {
	perms := EtcdPermissions(&spec.Etcd, fldPath.Child("etcd"))
	if a := spec.Audit; a != nil {
		if a.Policy != nil && a.Policy.ConfigMap != nil {
			perms = append(perms, readPermission(fldPath.Child("audit", "policy", "configMap"), "configmaps", a.Policy.ConfigMap.Name))
		}
		if a.Webhook != nil {
			perms = append(perms, readPermission(fldPath.Child("audit", "webhook", "configSecretName"), "secrets", a.Webhook.ConfigSecretName))
		}
	}
	if a := spec.Authorization; a != nil && a.Webhook != nil {
		perms = append(perms, readPermission(fldPath.Child("authorization", "webhook", "configSecretName"), "secrets", a.Webhook.ConfigSecretName))
	}
	return perms
}

// EtcdPermissions holds the etcd client TLS Secret to reading it: the server mounts its key
// into the component's pods.
func EtcdPermissions(etcd *operator.EtcdConfig, fldPath *field.Path) []Permission {
	if etcd == nil || etcd.TLSConfig == nil {
		return nil
	}
	return []Permission{readPermission(fldPath.Child("tlsConfig", "secretRef"), "secrets", etcd.TLSConfig.SecretRef.Name)}
}

// readPermission is get on one named Secret or ConfigMap.
func readPermission(fld *field.Path, resource, name string) Permission {
	kind := "Secret"
	if resource == "configmaps" {
		kind = "ConfigMap"
	}
	return Permission{Field: fld.String(), Value: kind + "/" + name, Verb: "get", Resource: resource, Name: name}
}

// CertificateTemplatesPermissions holds a template's issuerRef to what the author could use
// directly, as spec.certificates.issuerRef is: the server has that issuer sign on the
// author's behalf.
func CertificateTemplatesPermissions(templates operator.CertificateTemplateMap, fldPath *field.Path) []Permission {
	var perms []Permission
	for _, key := range slices.Sorted(maps.Keys(templates)) {
		t := templates[key]
		perms = append(perms, CertificateTemplatePermissions(&t, fldPath.Key(key))...)
	}
	return perms
}

// CertificateTemplatePermissions holds one template's issuerRef to creating
// certificates.cert-manager.io.
func CertificateTemplatePermissions(t *operator.CertificateTemplate, fldPath *field.Path) []Permission {
	if t == nil || t.Spec == nil || t.Spec.IssuerRef == nil {
		return nil
	}
	return []Permission{issuerPermission(t.Spec.IssuerRef, fldPath.Child("spec", "issuerRef"))}
}

// CABundlePermissions holds the Secrets whose CAs join a component's CA bundles to reading
// them: the server copies their certificates into Secrets of its own and has the components
// trust them.
func CABundlePermissions(caBundle, clientCABundle *corev1.LocalObjectReference, fldPath *field.Path) []Permission {
	var perms []Permission
	for _, ref := range []struct {
		ref   *corev1.LocalObjectReference
		field string
	}{{caBundle, "caBundleSecretRef"}, {clientCABundle, "clientCABundleRef"}} {
		if ref.ref != nil {
			perms = append(perms, Permission{
				Field: fldPath.Child(ref.field).String(), Value: "Secret/" + ref.ref.Name,
				Verb: "get", Resource: "secrets", Name: ref.ref.Name,
			})
		}
	}
	return perms
}

func issuerPermission(ref *operator.ObjectReference, fldPath *field.Path) Permission {
	return Permission{
		Field: fldPath.String(), Value: ref.Kind + "/" + ref.Name,
		Verb: "create", Group: cmv1.SchemeGroupVersion.Group, Resource: "certificates",
	}
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
		perms = append(perms, issuerPermission(ref, fldPath.Child("issuerRef")))
	}
	if ref := certs.CASecretRef; ref != nil {
		perms = append(perms, Permission{
			Field: fldPath.Child("caSecretRef").String(), Value: "Secret/" + ref.Name,
			Verb: "get", Resource: "secrets", Name: ref.Name,
		})
	}
	return perms
}

// AuthPermissions holds the Secrets an auth spec names, which the server mounts into the
// component's pods, to reading them: the OIDC issuer's CA, the token webhook's kubeconfig
// and the static token file. Otherwise an author could have a Secret they may not read
// mounted, and served back through the component.
func AuthPermissions(auth *operator.AuthSpec, fldPath *field.Path) []Permission {
	if auth == nil {
		return nil
	}
	var perms []Permission
	secret := func(fld *field.Path, name string) {
		perms = append(perms, readPermission(fld, "secrets", name))
	}
	if o := auth.OIDC; o != nil && o.CAFileRef != nil {
		secret(fldPath.Child("oidc", "caFileRef"), o.CAFileRef.Name)
	}
	if w := auth.Webhook; w != nil {
		secret(fldPath.Child("webhook", "configSecretName"), w.ConfigSecretName)
	}
	if t := auth.TokenAuthFile; t != nil {
		secret(fldPath.Child("tokenAuthFile", "secretName"), t.SecretName)
	}
	return perms
}
