package store

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// ComponentPermissions holds what every component's spec may ask beyond a ClusterIP Service
// and pods of kcp's image to what it is. An image from another repository runs code of the
// author's choice in the namespace, which only an author who may create the Deployment may
// ask for; any tag of kcp's own repository is kcp's code, which a setup is for. Extra
// arguments point kcp's own binary at files and endpoints of the author's choice, with the
// identities the server mounts, so they are held to the same right. A NodePort or
// LoadBalancer Service, or a Service's labels and annotations (which cloud load balancers,
// external-dns and service meshes act on), open the setup beyond the cluster, which only an
// author who may create Services may ask for.
func ComponentPermissions(spec *operator.ComponentSpec, fldPath *field.Path) []Permission {
	perms := ImagePermissions(spec.Image, fldPath.Child("image"))
	if len(spec.ExtraArgs) > 0 {
		perms = append(perms, ArgsPermissions(spec.ExtraArgs, fldPath.Child("extraArgs"))...)
	}
	if t := spec.ServiceTemplate; t != nil {
		if t.Spec != nil && t.Spec.Type != "" && t.Spec.Type != corev1.ServiceTypeClusterIP {
			perms = append(perms, servicePermission(fldPath.Child("serviceTemplate", "spec", "type"), string(t.Spec.Type)))
		}
		if m := t.Metadata; m != nil && (len(m.Labels) > 0 || len(m.Annotations) > 0) {
			perms = append(perms, ChangeOf(servicePermission(fldPath.Child("serviceTemplate", "metadata"), metadataValue(m)), m))
		}
	}
	perms = append(perms, WorkloadTemplatePermissions(spec.DeploymentTemplate, fldPath.Child("deploymentTemplate"), runPermission)...)
	perms = append(perms, VolumesPermissions(spec.ExtraVolumes, fldPath.Child("extraVolumes"))...)
	return append(perms, CertificateTemplatesPermissions(spec.CertificateTemplates, fldPath.Child("certificateTemplates"))...)
}

// servicePermission is create on Services, for a field that decides how a Service is
// exposed.
func servicePermission(fld *field.Path, value string) Permission {
	return Permission{Field: fld.String(), Value: value, Verb: "create", Resource: "services"}
}

// metadataValue shows the keys of a metadata template in a 403.
func metadataValue(m *operator.MetadataTemplate) string {
	keys := slices.Concat(slices.Sorted(maps.Keys(m.Labels)), slices.Sorted(maps.Keys(m.Annotations)))
	return strings.Join(keys, ", ")
}

// AllowedPodAnnotations are the pod template annotations any author may set: they tell
// kubectl, the cluster autoscaler and Prometheus about the pods, and select or grant nothing.
// Every other pod or workload label and annotation needs the right to create the workload,
// held by its value as well as its key:
// labels put pods into other Services, NetworkPolicies and PodDisruptionBudgets, and
// annotations drive sidecar injectors, image updaters and secret replicators.
var AllowedPodAnnotations = []string{
	"kubectl.kubernetes.io/default-container",
	"kubectl.kubernetes.io/restartedAt",
	"cluster-autoscaler.kubernetes.io/safe-to-evict",
	"prometheus.io/scrape",
	"prometheus.io/port",
	"prometheus.io/path",
	"prometheus.io/scheme",
}

// WorkloadTemplatePermissions holds a Deployment's (or a managed etcd's StatefulSet's)
// template to the right to create that workload, through run: its labels and annotations
// and its pods', except AllowedPodAnnotations. The image pull Secrets are read by the
// kubelet for the author, so each needs get on it.
func WorkloadTemplatePermissions(tmpl *operator.DeploymentTemplate, fldPath *field.Path, run func(*field.Path, string) Permission) []Permission {
	if tmpl == nil {
		return nil
	}
	var perms []Permission
	if m := tmpl.Metadata; m != nil && (len(m.Labels) > 0 || len(m.Annotations) > 0) {
		perms = append(perms, ChangeOf(run(fldPath.Child("metadata"), metadataValue(m)), m))
	}
	if tmpl.Spec == nil || tmpl.Spec.Template == nil {
		return perms
	}
	podPath := fldPath.Child("spec", "template")
	if m := tmpl.Spec.Template.Metadata; m != nil {
		if len(m.Labels) > 0 {
			perms = append(perms, ChangeOf(run(podPath.Child("metadata", "labels"), strings.Join(slices.Sorted(maps.Keys(m.Labels)), ", ")), m.Labels))
		}
		// The allowed annotations are no part of what is held: kubectl rollout restart
		// changes one of them, and asks nothing.
		others := map[string]string{}
		for k, v := range m.Annotations {
			if !slices.Contains(AllowedPodAnnotations, k) {
				others[k] = v
			}
		}
		if len(others) > 0 {
			value := strings.Join(slices.Sorted(maps.Keys(others)), ", ")
			perms = append(perms, ChangeOf(run(podPath.Child("metadata", "annotations"), value), others))
		}
	}
	if spec := tmpl.Spec.Template.Spec; spec != nil {
		for i, ref := range spec.ImagePullSecrets {
			perms = append(perms, readPermission(podPath.Child("spec", "imagePullSecrets").Index(i).Child("name"), "secrets", ref.Name))
		}
	}
	return perms
}

// ImagePermissions holds an image from another repository than kcp's to creating
// Deployments: it runs code of the author's choice in the namespace (ComponentPermissions).
// Its pull Secrets are read by the kubelet for the author, so each needs get on it.
func ImagePermissions(image *operator.ImageSpec, fldPath *field.Path) []Permission {
	return imagePermissions(image, operatorv1alpha1.DefaultImageRepository, fldPath, runPermission)
}

// imagePermissions holds an image from another repository than def to run, and its pull
// Secrets to reading them.
func imagePermissions(image *operator.ImageSpec, def string, fldPath *field.Path, run func(*field.Path, string) Permission) []Permission {
	if image == nil {
		return nil
	}
	var perms []Permission
	if image.Repository != "" && image.Repository != def {
		// The tag chooses the code of that repository that runs: a change asks again.
		what := struct{ Repository, Tag string }{image.Repository, image.Tag}
		perms = append(perms, ChangeOf(run(fldPath.Child("repository"), image.Repository), what))
	}
	for i, ref := range image.ImagePullSecrets {
		perms = append(perms, readPermission(fldPath.Child("imagePullSecrets").Index(i).Child("name"), "secrets", ref.Name))
	}
	return perms
}

// ArgsPermissions holds a container's arguments to creating Deployments, as its command is:
// they choose what the image's entrypoint does with the identities the server mounts.
func ArgsPermissions(args []string, fldPath *field.Path) []Permission {
	if len(args) == 0 {
		return nil
	}
	return []Permission{ChangeOf(runPermission(fldPath, strings.Join(args, " ")), args)}
}

// CommandPermissions holds a container's command to creating Deployments: whatever the image,
// a command of the author's choice runs a binary of the author's choice with the identities
// the server mounts into the container, which only a Deployment's author could otherwise do.
func CommandPermissions(command []string, fldPath *field.Path) []Permission {
	if len(command) == 0 {
		return nil
	}
	return []Permission{ChangeOf(runPermission(fldPath, strings.Join(command, " ")), command)}
}

// runPermission is create on Deployments, for a field that chooses what a pod runs.
func runPermission(fld *field.Path, value string) Permission {
	return Permission{Field: fld.String(), Value: value, Verb: "create", Group: "apps", Resource: "deployments"}
}

// RunPermission is create on Deployments, for a field that chooses what a component's pods
// run (runPermission).
func RunPermission(fld *field.Path, value string) Permission { return runPermission(fld, value) }

// runEtcdPermission is create on StatefulSets, for a field that chooses what a managed
// etcd's pods run: the server runs them as a StatefulSet.
func runEtcdPermission(fld *field.Path, value string) Permission {
	return Permission{Field: fld.String(), Value: value, Verb: "create", Group: "apps", Resource: "statefulsets"}
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
// A PersistentVolumeClaim needs get on it, since its data is mounted the same way. An
// inline CSI volume (a secrets-store driver reads a vault as the pod), an ephemeral volume
// (the cluster creates a claim for the pod) and a projected service account token (the
// pod's identity toward other systems) each stand for what only the author of a pod may do,
// so they need create on pods; each is held by the whole volume (or token projection), so
// that another vault path, claim or audience, or a further volume, asks again.
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
		if v.PersistentVolumeClaim != nil {
			perms = append(perms, readPermission(idx.Child("persistentVolumeClaim", "claimName"), "persistentvolumeclaims", v.PersistentVolumeClaim.ClaimName))
		}
		if v.CSI != nil {
			perms = append(perms, ChangeOf(podPermission(idx.Child("csi"), "CSI driver "+v.CSI.Driver), v))
		}
		if v.Ephemeral != nil {
			perms = append(perms, ChangeOf(podPermission(idx.Child("ephemeral"), "an ephemeral volume claim"), v))
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
			if t := src.ServiceAccountToken; t != nil {
				perms = append(perms, ChangeOf(podPermission(srcPath.Child("serviceAccountToken"), "a token for audience "+strconv.Quote(t.Audience)), t))
			}
		}
	}
	return perms
}

// podPermission is create on pods, for a volume that only the author of a pod may ask for.
func podPermission(fld *field.Path, value string) Permission {
	return Permission{Field: fld.String(), Value: value, Verb: "create", Resource: "pods"}
}

// ShardConfigPermissions holds the Secrets and ConfigMaps a shard's etcd, audit and
// authorization settings name to reading them: the server mounts them into the shard's pods.
// The VirtualWorkspace it announces needs use on it.
func ShardConfigPermissions(spec *operator.CommonShardSpec, fldPath *field.Path) []Permission {
	perms := EtcdPermissions(&spec.Etcd, fldPath.Child("etcd"))
	perms = append(perms, ReferencePermissions(spec.KcpVirtualWorkspace, fldPath.Child("kcpVirtualWorkspace"), "virtualworkspaces")...)
	if spec.Audit != nil {
		audit := &operatorv1alpha1.AuditSpec{}
		err := operatorv1alpha1.Convert_operator_AuditSpec_To_v1alpha1_AuditSpec(spec.Audit, audit, nil)
		perms = append(perms, usersMountsPermissions(kcp.Audit(audit), err, fldPath.Child("audit"))...)
	}
	if spec.Authorization != nil {
		authz := &operatorv1alpha1.AuthorizationSpec{}
		err := operatorv1alpha1.Convert_operator_AuthorizationSpec_To_v1alpha1_AuthorizationSpec(spec.Authorization, authz, nil)
		perms = append(perms, usersMountsPermissions(kcp.Authorization(authz), err, fldPath.Child("authorization"))...)
	}
	return perms
}

// EtcdPermissions holds the etcd client TLS Secret to reading it: the server mounts its key
// into the component's pods. A managed etcd's image and template are held as a component's
// are, to creating StatefulSets: its members hold certificates that kcp's storage trusts.
func EtcdPermissions(etcd *operator.EtcdConfig, fldPath *field.Path) []Permission {
	if etcd == nil {
		return nil
	}
	external := operatorv1alpha1.EtcdConfig{}
	err := operatorv1alpha1.Convert_operator_EtcdConfig_To_v1alpha1_EtcdConfig(etcd, &external, nil)
	perms := usersMountsPermissions(kcp.ExternalEtcd(external), err, fldPath)
	if m := etcd.Managed; m != nil {
		managed := fldPath.Child("managed")
		perms = append(perms, imagePermissions(m.Image, operatorv1alpha1.DefaultEtcdImageRepository, managed.Child("image"), runEtcdPermission)...)
		perms = append(perms, WorkloadTemplatePermissions(m.Template, managed.Child("template"), runEtcdPermission)...)
	}
	return perms
}

// EtcdRestorePermissions holds a managed etcd's restore (m.restore, at fldPath) to get on the
// backup subresource of the setup whose store holds the snapshot, by name: the one
// restore.from names, or self, the object's own (a restore puts a snapshot's workspaces back in
// place of the installation's). For restore.from the server reads that setup's snapshot through
// its agent and has its etcd client CA sign the certificate the members read it with. The
// store's owner is the held value: another snapshot of it asks nothing again, another source
// asks again.
func EtcdRestorePermissions(m *operator.ManagedEtcd, self operator.EtcdRestoreSource, fldPath *field.Path) []Permission {
	if m == nil || m.Restore == nil {
		return nil
	}
	source, fld := self, fldPath
	if r := m.Restore; r.From != nil {
		source, fld = *r.From, fldPath.Child("from")
	}
	resource := map[string]string{"RootShard": "rootshards", "Shard": "shards"}[source.Kind]
	if resource == "" {
		// Validation refuses another kind; should it reach here, nothing is readable by it.
		resource = strings.ToLower(source.Kind) + "s"
	}
	return []Permission{{Field: fld.String(), Value: source.Kind + "/" + source.Name,
		Verb: "get", Group: operator.GroupName, Resource: resource, Subresource: BackupSubresource, Name: source.Name}}
}

// usersMountsPermissions holds the Secrets and ConfigMaps of the user's that a setting's
// feature mounts, as the builders build it, to reading them, each at the field that names
// it below fldPath: the list of what is mounted is the builders' alone. When the setting
// could not be read in the builders' version (err), what it mounts is unknown, and it is held
// to creating Deployments, whose author may mount anything.
func usersMountsPermissions(f workload.Feature, err error, fldPath *field.Path) []Permission {
	if err != nil {
		return []Permission{runPermission(fldPath, err.Error())}
	}
	var perms []Permission
	for _, m := range f.Mounts {
		if !m.User {
			continue
		}
		names := strings.Split(m.Field, ".")
		fld := fldPath.Child(names[0], names[1:]...)
		if m.ConfigMap != "" {
			perms = append(perms, readPermission(fld, "configmaps", m.ConfigMap))
		} else {
			perms = append(perms, readPermission(fld, "secrets", m.Secret))
		}
	}
	return perms
}

// readPermission is get on one named Secret, ConfigMap or PersistentVolumeClaim.
func readPermission(fld *field.Path, resource, name string) Permission {
	kind := map[string]string{"secrets": "Secret", "configmaps": "ConfigMap", "persistentvolumeclaims": "PersistentVolumeClaim"}[resource]
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
// certificates.cert-manager.io, and its secretTemplate's labels and annotations to patching
// Secrets: they decide which tools copy a Secret where (replicators, reflectors), and the
// Secrets of CA certificates hold the keys that sign the setup's identities.
func CertificateTemplatePermissions(t *operator.CertificateTemplate, fldPath *field.Path) []Permission {
	if t == nil || t.Spec == nil {
		return nil
	}
	var perms []Permission
	if t.Spec.IssuerRef != nil {
		perms = append(perms, issuerPermission(t.Spec.IssuerRef, fldPath.Child("spec", "issuerRef")))
	}
	if m := t.Spec.SecretTemplate; m != nil && (len(m.Labels) > 0 || len(m.Annotations) > 0) {
		perms = append(perms, ChangeOf(Permission{
			Field: fldPath.Child("spec", "secretTemplate").String(), Value: metadataValue(m),
			Verb: "patch", Resource: "secrets",
		}, m))
	}
	return perms
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
	return ChangeOf(Permission{
		Field: fldPath.String(), Value: ref.Kind + "/" + ref.Name,
		Verb: "create", Group: cmv1.SchemeGroupVersion.Group, Resource: "certificates",
	}, ref)
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
// and the static token file, as the builders' features of kcp and kcp-front-proxy mount
// them. Otherwise an author could have a Secret they may not read mounted, and served back
// through the component.
func AuthPermissions(auth *operator.AuthSpec, fldPath *field.Path) []Permission {
	if auth == nil {
		return nil
	}
	out := &operatorv1alpha1.AuthSpec{}
	err := operatorv1alpha1.Convert_operator_AuthSpec_To_v1alpha1_AuthSpec(auth, out, nil)
	return usersMountsPermissions(kcp.Authentication(out), err, fldPath)
}
