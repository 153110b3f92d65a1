package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// contentCase is one permission kind and one change of what it holds: build(0) is the stored
// object's permissions, build(1) the update's. asks says whether the update asks anything
// again (requirePermissions asks what heldBefore says the stored object did not hold).
type contentCase struct {
	name string
	// kinds are the functions of this package that build the permissions under test.
	kinds []string
	build func(v int) []Permission
	asks  bool
}

// pick is the first value for variant 0, the second for variant 1.
func pick[T any](v int, a, b T) T {
	if v == 0 {
		return a
	}
	return b
}

var spec = field.NewPath("spec")

func component(f func(*operator.ComponentSpec)) []Permission {
	c := &operator.ComponentSpec{}
	f(c)
	return ComponentPermissions(c, spec)
}

func podTemplate(labels, annotations map[string]string, pullSecrets ...string) *operator.DeploymentTemplate {
	var refs []corev1.LocalObjectReference
	for _, s := range pullSecrets {
		refs = append(refs, corev1.LocalObjectReference{Name: s})
	}
	return &operator.DeploymentTemplate{Spec: &operator.DeploymentSpecTemplate{Template: &operator.PodTemplateSpec{
		Metadata: &operator.MetadataTemplate{Labels: labels, Annotations: annotations},
		Spec:     &operator.PodSpecTemplate{ImagePullSecrets: refs},
	}}}
}

func csi(name string, attrs map[string]string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{
		Driver: "secrets-store.csi.k8s.io", VolumeAttributes: attrs}}}
}

func ephemeral(size string) corev1.Volume {
	return corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		}},
	}}}
}

func projected(src corev1.VolumeProjection) corev1.Volume {
	return corev1.Volume{Name: "projected", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{src}}}}
}

func volumes(vs ...corev1.Volume) []Permission {
	return VolumesPermissions(vs, spec.Child("extraVolumes"))
}

func ref(name string) *corev1.LocalObjectReference { return &corev1.LocalObjectReference{Name: name} }

func issuer(name, group string) *operator.ObjectReference {
	return &operator.ObjectReference{Name: name, Kind: "ClusterIssuer", Group: group}
}

func certTemplate(t operator.CertificateTemplate) []Permission {
	return CertificateTemplatesPermissions(operator.CertificateTemplateMap{"server-ca": t}, spec.Child("certificateTemplates"))
}

func secretTemplate(annotations map[string]string) operator.CertificateTemplate {
	return operator.CertificateTemplate{Spec: &operator.CertificateSpecTemplate{
		SecretTemplate: &operator.MetadataTemplate{Annotations: annotations}}}
}

// restore is the permissions of a RootShard root's managed etcd restoring r.
func restore(r *operator.EtcdRestore) []Permission {
	return EtcdRestorePermissions(&operator.ManagedEtcd{Restore: r}, operator.EtcdRestoreSource{Kind: "RootShard", Name: "root"},
		spec.Child("etcd", "managed", "restore"))
}

func shardConfig(f func(*operator.CommonShardSpec)) []Permission {
	s := &operator.CommonShardSpec{}
	f(s)
	return ShardConfigPermissions(s, spec)
}

const reflectorNamespaces = "reflector.v1.k8s.emberstack.com/reflection-allowed-namespaces"

// contentCases are the rows of TestHeldPermissionsAreContentAddressed, one per permission
// kind and case; TestEveryPermissionKindIsContentAddressed fails on a function of this package
// that builds permissions and has no row that changes its content.
var contentCases = []contentCase{
	// serviceTemplate: what external-dns, load balancers and meshes act on.
	{name: "serviceTemplate annotation value", kinds: []string{"ComponentPermissions", "servicePermission"}, asks: true,
		build: func(v int) []Permission {
			return component(func(c *operator.ComponentSpec) {
				c.ServiceTemplate = &operator.ServiceTemplate{Metadata: &operator.MetadataTemplate{Annotations: map[string]string{
					"external-dns.alpha.kubernetes.io/hostname": pick(v, "kcp.team-a.example.com", "login.bank.example.com")}}}
			})
		}},
	{name: "serviceTemplate label value", kinds: []string{"ComponentPermissions"}, asks: true,
		build: func(v int) []Permission {
			return component(func(c *operator.ComponentSpec) {
				c.ServiceTemplate = &operator.ServiceTemplate{Metadata: &operator.MetadataTemplate{Labels: map[string]string{
					"istio.io/rev": pick(v, "stable", "canary")}}}
			})
		}},
	{name: "serviceTemplate unchanged", kinds: []string{"ComponentPermissions"}, asks: false,
		build: func(int) []Permission {
			return component(func(c *operator.ComponentSpec) {
				c.ServiceTemplate = &operator.ServiceTemplate{Metadata: &operator.MetadataTemplate{
					Labels: map[string]string{"a": "1", "b": "2"}, Annotations: map[string]string{"c": "3", "d": "4"}}}
			})
		}},
	{name: "serviceTemplate type", kinds: []string{"ComponentPermissions"}, asks: true,
		build: func(v int) []Permission {
			return component(func(c *operator.ComponentSpec) {
				c.ServiceTemplate = &operator.ServiceTemplate{Spec: &operator.ServiceSpecTemplate{Type: pick(v, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer)}}
			})
		}},
	// Workload templates: labels join other Services, annotations drive injectors.
	{name: "pod label value", kinds: []string{"WorkloadTemplatePermissions"}, asks: true,
		build: func(v int) []Permission {
			return WorkloadTemplatePermissions(podTemplate(map[string]string{"app": pick(v, "kcp", "payments")}, nil), spec, runPermission)
		}},
	{name: "pod annotation value", kinds: []string{"WorkloadTemplatePermissions"}, asks: true,
		build: func(v int) []Permission {
			return WorkloadTemplatePermissions(podTemplate(nil, map[string]string{"sidecar.istio.io/inject": pick(v, "false", "true")}), spec, runPermission)
		}},
	{name: "an allowed pod annotation next to a held one", kinds: []string{"WorkloadTemplatePermissions"}, asks: false,
		build: func(v int) []Permission {
			return WorkloadTemplatePermissions(podTemplate(nil, map[string]string{
				"sidecar.istio.io/inject": "true", "kubectl.kubernetes.io/restartedAt": pick(v, "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z")}), spec, runPermission)
		}},
	{name: "workload metadata annotation value", kinds: []string{"WorkloadTemplatePermissions"}, asks: true,
		build: func(v int) []Permission {
			return WorkloadTemplatePermissions(&operator.DeploymentTemplate{Metadata: &operator.MetadataTemplate{
				Annotations: map[string]string{"image.updater/track": pick(v, "stable", "latest")}}}, spec, runPermission)
		}},
	{name: "image pull Secret", kinds: []string{"WorkloadTemplatePermissions", "readPermission"}, asks: true,
		build: func(v int) []Permission {
			return WorkloadTemplatePermissions(podTemplate(nil, nil, pick(v, "pull", "payments-pull")), spec, runPermission)
		}},
	{name: "managed etcd template label value", kinds: []string{"EtcdPermissions", "runEtcdPermission"}, asks: true,
		build: func(v int) []Permission {
			return EtcdPermissions(&operator.EtcdConfig{Managed: &operator.ManagedEtcd{
				Template: podTemplate(map[string]string{"app": pick(v, "etcd", "payments")}, nil)}}, spec.Child("etcd"))
		}},
	// A restore: the snapshots are the data of the setup whose store holds them.
	{name: "restore source name", kinds: []string{"EtcdRestorePermissions"}, asks: true,
		build: func(v int) []Permission {
			return restore(&operator.EtcdRestore{Snapshot: "source-20261129-010000", From: &operator.EtcdRestoreSource{Kind: "RootShard", Name: pick(v, "source", "payments")}})
		}},
	{name: "restore source kind", kinds: []string{"EtcdRestorePermissions"}, asks: true,
		build: func(v int) []Permission {
			return restore(&operator.EtcdRestore{Snapshot: "source-20261129-010000",
				From: &operator.EtcdRestoreSource{Kind: pick(v, "RootShard", "Shard"), Name: "source"}})
		}},
	{name: "restore of another snapshot of the same source", kinds: []string{"EtcdRestorePermissions"}, asks: false,
		build: func(v int) []Permission {
			return restore(&operator.EtcdRestore{Snapshot: pick(v, "source-20261129-010000", "source-20261129-020000"),
				From: &operator.EtcdRestoreSource{Kind: "RootShard", Name: "source"}})
		}},
	{name: "restore of the own store instead of another's", kinds: []string{"EtcdRestorePermissions"}, asks: true,
		build: func(v int) []Permission {
			r := &operator.EtcdRestore{Snapshot: "root-20261129-010000"}
			if v == 1 {
				r.From = &operator.EtcdRestoreSource{Kind: "RootShard", Name: "source"}
			}
			return restore(r)
		}},
	{name: "restore of another snapshot of the own store", kinds: []string{"EtcdRestorePermissions"}, asks: false,
		build: func(v int) []Permission {
			return restore(&operator.EtcdRestore{Snapshot: pick(v, "root-20261129-010000", "root-20261129-020000")})
		}},
	// What runs.
	{name: "image repository", kinds: []string{"ImagePermissions", "imagePermissions", "runPermission"}, asks: true,
		build: func(v int) []Permission {
			return ImagePermissions(&operator.ImageSpec{Repository: pick(v, "mirror.example.com/kcp", "evil.example.com/kcp")}, spec.Child("image"))
		}},
	{name: "image tag of another repository", kinds: []string{"ImagePermissions", "imagePermissions"}, asks: true,
		build: func(v int) []Permission {
			return ImagePermissions(&operator.ImageSpec{Repository: "mirror.example.com/kcp", Tag: pick(v, "v0.28.0", "debug")}, spec.Child("image"))
		}},
	{name: "image pull Secret of an image", kinds: []string{"ImagePermissions"}, asks: true,
		build: func(v int) []Permission {
			return ImagePermissions(&operator.ImageSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: pick(v, "pull", "other")}}}, spec.Child("image"))
		}},
	{name: "managed etcd image tag", kinds: []string{"EtcdPermissions", "imagePermissions"}, asks: true,
		build: func(v int) []Permission {
			return EtcdPermissions(&operator.EtcdConfig{Managed: &operator.ManagedEtcd{
				Image: &operator.ImageSpec{Repository: "mirror.example.com/etcd", Tag: pick(v, "v3.5.21", "debug")}}}, spec.Child("etcd"))
		}},
	{name: "extraArgs split differently, joined alike", kinds: []string{"ComponentPermissions", "ArgsPermissions"}, asks: true,
		build: func(v int) []Permission {
			return component(func(c *operator.ComponentSpec) {
				c.ExtraArgs = pick(v, []string{"--v=2 --token-auth-file=/x"}, []string{"--v=2", "--token-auth-file=/x"})
			})
		}},
	{name: "extraArgs unchanged", kinds: []string{"ArgsPermissions"}, asks: false,
		build: func(int) []Permission { return ArgsPermissions([]string{"--v=2"}, spec.Child("extraArgs")) }},
	{name: "command", kinds: []string{"CommandPermissions"}, asks: true,
		build: func(v int) []Permission {
			return CommandPermissions(pick(v, []string{"/bin/sh -c", "true"}, []string{"/bin/sh", "-c true"}), spec.Child("command"))
		}},
	// Volumes.
	{name: "CSI volume attribute (a vault path)", kinds: []string{"VolumesPermissions", "podPermission"}, asks: true,
		build: func(v int) []Permission {
			return volumes(csi("vault", map[string]string{"secretProviderClass": pick(v, "team-a", "payments")}))
		}},
	{name: "a further CSI volume of an approved driver", kinds: []string{"VolumesPermissions"}, asks: true,
		build: func(v int) []Permission {
			vs := []corev1.Volume{csi("vault", map[string]string{"secretProviderClass": "team-a"})}
			if v == 1 {
				vs = append(vs, csi("vault2", map[string]string{"secretProviderClass": "payments"}))
			}
			return volumes(vs...)
		}},
	{name: "CSI volumes reordered", kinds: []string{"VolumesPermissions"}, asks: false,
		build: func(v int) []Permission {
			a, b := csi("a", map[string]string{"x": "1"}), csi("b", map[string]string{"x": "2"})
			return volumes(pick(v, []corev1.Volume{a, b}, []corev1.Volume{b, a})...)
		}},
	{name: "CSI node publish Secret", kinds: []string{"VolumesPermissions"}, asks: true,
		build: func(v int) []Permission {
			vol := csi("vault", nil)
			vol.CSI.NodePublishSecretRef = ref(pick(v, "creds", "payments-creds"))
			return volumes(vol)
		}},
	{name: "ephemeral volume claim size", kinds: []string{"VolumesPermissions"}, asks: true,
		build: func(v int) []Permission { return volumes(ephemeral(pick(v, "1Gi", "10Ti"))) }},
	{name: "projected token audience", kinds: []string{"VolumesPermissions"}, asks: true,
		build: func(v int) []Permission {
			return volumes(projected(corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Audience: pick(v, "vault", "payments"), Path: "token"}}))
		}},
	{name: "projected token lifetime", kinds: []string{"VolumesPermissions"}, asks: true,
		build: func(v int) []Permission {
			return volumes(projected(corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Audience: "vault", Path: "token", ExpirationSeconds: new(pick(v, int64(600), int64(1<<32)))}}))
		}},
	{name: "projected Secret", kinds: []string{"VolumesPermissions"}, asks: true,
		build: func(v int) []Permission {
			return volumes(projected(corev1.VolumeProjection{Secret: &corev1.SecretProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: pick(v, "a", "b")}}}))
		}},
	{name: "projected ConfigMap", kinds: []string{"VolumesPermissions"}, asks: true,
		build: func(v int) []Permission {
			return volumes(projected(corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: pick(v, "a", "b")}}}))
		}},
	{name: "Secret volume", kinds: []string{"VolumesPermissions"}, asks: true,
		build: func(v int) []Permission {
			return volumes(corev1.Volume{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: pick(v, "a", "b")}}})
		}},
	{name: "ConfigMap volume", kinds: []string{"VolumesPermissions"}, asks: true,
		build: func(v int) []Permission {
			return volumes(corev1.Volume{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: pick(v, "a", "b")}}}})
		}},
	{name: "PersistentVolumeClaim volume", kinds: []string{"VolumesPermissions"}, asks: true,
		build: func(v int) []Permission {
			return volumes(corev1.Volume{Name: "p", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: pick(v, "a", "b")}}})
		}},
	{name: "Secret a field names", kinds: []string{"SecretPermissions"}, asks: true,
		build: func(v int) []Permission {
			return SecretPermissions(ref(pick(v, "a", "b")), spec.Child("kubeconfigSecretRef"))
		}},
	// Certificates.
	{name: "secretTemplate reflector namespaces on a CA Secret", kinds: []string{"CertificateTemplatesPermissions", "CertificateTemplatePermissions"}, asks: true,
		build: func(v int) []Permission {
			return certTemplate(secretTemplate(map[string]string{
				"reflector.v1.k8s.emberstack.com/reflection-allowed": "true", reflectorNamespaces: pick(v, "team-a", "team-a,payments")}))
		}},
	{name: "secretTemplate unchanged", kinds: []string{"CertificateTemplatePermissions"}, asks: false,
		build: func(int) []Permission {
			return certTemplate(secretTemplate(map[string]string{reflectorNamespaces: "team-a"}))
		}},
	{name: "certificate template issuerRef group", kinds: []string{"CertificateTemplatePermissions", "issuerPermission"}, asks: true,
		build: func(v int) []Permission {
			return certTemplate(operator.CertificateTemplate{Spec: &operator.CertificateSpecTemplate{IssuerRef: issuer("corp", pick(v, "cert-manager.io", "awspca.cert-manager.io"))}})
		}},
	{name: "certificate template issuerRef name", kinds: []string{"CertificateTemplatePermissions"}, asks: true,
		build: func(v int) []Permission {
			return certTemplate(operator.CertificateTemplate{Spec: &operator.CertificateSpecTemplate{IssuerRef: issuer(pick(v, "corp", "public"), "cert-manager.io")}})
		}},
	{name: "certificates issuerRef group", kinds: []string{"CertificatesPermissions"}, asks: true,
		build: func(v int) []Permission {
			return CertificatesPermissions(&operator.Certificates{IssuerRef: issuer("corp", pick(v, "cert-manager.io", "awspca.cert-manager.io"))}, spec.Child("certificates"))
		}},
	{name: "certificates caSecretRef", kinds: []string{"CertificatesPermissions"}, asks: true,
		build: func(v int) []Permission {
			return CertificatesPermissions(&operator.Certificates{CASecretRef: ref(pick(v, "a", "b"))}, spec.Child("certificates"))
		}},
	// delete-etcd-volumes: its whole content is its value.
	{name: "delete-etcd-volumes set", kinds: []string{"EtcdVolumesPermissions"}, asks: true,
		build: func(v int) []Permission {
			return EtcdVolumesPermissions(&metav1.ObjectMeta{Annotations: map[string]string{
				operatorv1alpha1.AnnotationDeleteEtcdVolumes: pick(v, "false", "true")}})
		}},
	{name: "delete-etcd-volumes kept", kinds: []string{"EtcdVolumesPermissions"}, asks: false,
		build: func(int) []Permission {
			return EtcdVolumesPermissions(&metav1.ObjectMeta{Annotations: map[string]string{
				operatorv1alpha1.AnnotationDeleteEtcdVolumes: "true"}})
		}},
	// trust on the RootShard: what its kcp takes on the author's word.
	{name: "OIDC issuer", kinds: []string{"TrustPermissions"}, asks: true,
		build: func(v int) []Permission {
			return TrustPermissions(&operator.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}},
				IdentitySources(&operator.AuthSpec{OIDC: &operator.OIDCConfiguration{IssuerURL: pick(v, "https://idp.example.com", "https://idp.attacker.example")}}, spec.Child("auth")))
		}},
	{name: "shardBaseURL and a plain etcd", kinds: []string{"TrustPermissions"}, asks: true,
		build: func(v int) []Permission {
			return TrustPermissions(&operator.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}},
				ShardTrusted(&operator.CommonShardSpec{ShardBaseURL: "https://s.example.com:6443",
					Etcd: operator.EtcdConfig{Endpoints: []string{pick(v, "http://etcd-a:2379", "http://etcd-b:2379")}}}, spec))
		}},
	{name: "trusted unchanged", kinds: []string{"TrustPermissions"}, asks: false,
		build: func(int) []Permission {
			return TrustPermissions(&operator.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}},
				ShardTrusted(&operator.CommonShardSpec{ShardBaseURL: "https://s.example.com:6443"}, spec))
		}},
	{name: "CA bundle Secret", kinds: []string{"CABundlePermissions"}, asks: true,
		build: func(v int) []Permission { return CABundlePermissions(ref(pick(v, "a", "b")), nil, spec) }},
	{name: "client CA bundle Secret", kinds: []string{"CABundlePermissions"}, asks: true,
		build: func(v int) []Permission { return CABundlePermissions(nil, ref(pick(v, "a", "b")), spec) }},
	// Shard settings and auth: what is mounted, named.
	{name: "etcd client TLS Secret", kinds: []string{"EtcdPermissions", "usersMountsPermissions"}, asks: true,
		build: func(v int) []Permission {
			return EtcdPermissions(&operator.EtcdConfig{Endpoints: []string{"https://etcd:2379"},
				TLSConfig: &operator.EtcdTLSConfig{SecretRef: corev1.LocalObjectReference{Name: pick(v, "a", "b")}}}, spec.Child("etcd"))
		}},
	{name: "audit policy ConfigMap", kinds: []string{"ShardConfigPermissions"}, asks: true,
		build: func(v int) []Permission {
			return shardConfig(func(s *operator.CommonShardSpec) {
				s.Audit = &operator.AuditSpec{Policy: &operator.AuditPolicySpec{ConfigMap: &operator.LocalDataKeyReference{Name: pick(v, "a", "b"), Key: "policy.yaml"}}}
			})
		}},
	{name: "authorization webhook Secret", kinds: []string{"ShardConfigPermissions"}, asks: true,
		build: func(v int) []Permission {
			return shardConfig(func(s *operator.CommonShardSpec) {
				s.Authorization = &operator.AuthorizationSpec{Webhook: &operator.AuthorizationWebhookSpec{ConfigSecretName: pick(v, "a", "b")}}
			})
		}},
	{name: "kcpVirtualWorkspace", kinds: []string{"ShardConfigPermissions"}, asks: true,
		build: func(v int) []Permission {
			return shardConfig(func(s *operator.CommonShardSpec) { s.KcpVirtualWorkspace = ref(pick(v, "a", "b")) })
		}},
	{name: "OIDC CA Secret", kinds: []string{"AuthPermissions"}, asks: true,
		build: func(v int) []Permission {
			return AuthPermissions(&operator.AuthSpec{OIDC: &operator.OIDCConfiguration{IssuerURL: "https://idp.example.com",
				CAFileRef: &operator.LocalDataKeyReference{Name: pick(v, "a", "b"), Key: "ca.crt"}}}, spec.Child("auth"))
		}},
	{name: "token file Secret", kinds: []string{"AuthPermissions"}, asks: true,
		build: func(v int) []Permission {
			return AuthPermissions(&operator.AuthSpec{TokenAuthFile: &operator.TokenAuthFileSpec{SecretName: pick(v, "a", "b")}}, spec.Child("auth"))
		}},
	// References.
	{name: "use of a RootShard", kinds: []string{"UsePermission", "ReferencePermissions", "RootShardConfigPermissions"}, asks: true,
		build: func(v int) []Permission {
			return RootShardConfigPermissions(&operator.RootShardConfig{Reference: ref(pick(v, "a", "b"))}, spec.Child("rootShard"))
		}},
	{name: "copy of a join Secret", kinds: []string{"CopyPermissions", "RootShardConfigPermissions"}, asks: true,
		build: func(v int) []Permission {
			return RootShardConfigPermissions(&operator.RootShardConfig{SecretRef: ref(pick(v, "a", "b"))}, spec.Child("rootShard"))
		}},
	{name: "bootstrap Secret of a link", kinds: []string{"LinkPermissions", "CopyPermissions", "RootShardConfigPermissions"}, asks: true,
		build: func(v int) []Permission {
			return RootShardConfigPermissions(&operator.RootShardConfig{Link: &operator.RootShardLink{SecretRef: *ref(pick(v, "a", "b"))}}, spec.Child("rootShard"))
		}},
	{name: "cache reference", kinds: []string{"CachePermissions"}, asks: true,
		build: func(v int) []Permission {
			return CachePermissions(&operator.CacheConfig{Reference: ref(pick(v, "a", "b"))}, spec.Child("cache"))
		}},
	{name: "cache copy", kinds: []string{"CachePermissions"}, asks: true,
		build: func(v int) []Permission {
			return CachePermissions(&operator.CacheConfig{SecretRef: ref(pick(v, "a", "b"))}, spec.Child("cache"))
		}},
	{name: "cache over a link", kinds: []string{"CachePermissions"}, asks: true,
		build: func(v int) []Permission {
			return CachePermissions(&operator.CacheConfig{Link: &operator.RootShardLink{SecretRef: *ref(pick(v, "a", "b"))}}, spec.Child("cache"))
		}},
	{name: "a change of what ChangeOf holds", kinds: []string{"ChangeOf"}, asks: true,
		build: func(v int) []Permission {
			p := UsePermission(spec.Child("auth"), "rootshards", "root")
			return []Permission{ChangeOf(p, operator.AuthSpec{DropGroups: []string{pick(v, "a", "b")}})}
		}},
	{name: "a release of another repository's image (a RootShard's spec.version)", kinds: []string{"RunPermission"}, asks: true,
		build: func(v int) []Permission {
			return []Permission{RunPermission(field.NewPath("spec", "version"), []string{"v0.31.6 for Shard/b", "v0.32.3 for Shard/b"}[v])}
		}},
	{name: "adopt annotation added", kinds: []string{"AdoptPermissions"}, asks: true,
		build: func(v int) []Permission {
			o := &metav1.ObjectMeta{}
			if v == 1 {
				o.Annotations = map[string]string{operatorv1alpha1.AnnotationAdopt: operatorv1alpha1.AdoptKcpOperator}
			}
			return AdoptPermissions(o)
		}},
}

// TestHeldPermissionsAreContentAddressed holds each row's update to what it changes: a
// permission the stored object held is held again only for the same content, so a change of
// a value under a held key, of a volume's source or of a list entry asks again, and an update
// that changes nothing held (or only reorders it) asks nothing.
func TestHeldPermissionsAreContentAddressed(t *testing.T) {
	for _, tc := range contentCases {
		t.Run(tc.name, func(t *testing.T) {
			had, need := tc.build(0), tc.build(1)
			require.NotEmpty(t, need, "the update asks for something")
			// The stored object holds all of its own permissions: a digest is stable.
			for _, p := range tc.build(0) {
				require.True(t, heldBefore(p, had), "%s is held by the object that asks it", p.Field)
			}
			var asked []string
			for _, p := range need {
				if !heldBefore(p, had) {
					asked = append(asked, p.Field)
				}
			}
			if tc.asks {
				assert.NotEmpty(t, asked, "the change asks again")
			} else {
				assert.Empty(t, asked, "nothing held changed")
			}
		})
	}
}

// TestEveryPermissionKindIsContentAddressed walks every function of this package that builds
// a Permission or a list of them, and fails on one without a row of contentCases that changes
// what it holds and sees it asked again: a new permission kind comes with its content rows.
// Outside this package, a function that builds a Permission itself (rather than through these
// helpers) must be named in elsewhere, with the test of its own package that holds it to its
// content.
func TestEveryPermissionKindIsContentAddressed(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range contentCases {
		if tc.asks {
			for _, k := range tc.kinds {
				covered[k] = true
			}
		}
	}
	fset := token.NewFileSet()
	var kinds []string
	for _, file := range goFiles(t, ".") {
		f, err := parser.ParseFile(fset, file, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && returnsPermissions(fn, "") {
				kinds = append(kinds, fn.Name.Name)
			}
		}
	}
	require.Contains(t, kinds, "VolumesPermissions", "the walk finds the permission kinds")
	for _, k := range kinds {
		assert.True(t, covered[k], "%s builds permissions and no row of contentCases changes its content and sees it asked again", k)
	}

	elsewhere := map[string]string{
		"kubeconfig.bindPermissions": "TestBindPermissionsAreContentAddressed",
		// It asks every time the annotation becomes "true", never from what is held.
		"kubeconfig.admitSkipCleanup": "TestSkipKcpCleanupNeedsTheRightsOfLeavingTheBindings",
	}
	tests := map[string]bool{}
	var builders []string
	dirs, err := os.ReadDir("..")
	require.NoError(t, err)
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "store" {
			continue
		}
		for _, file := range goFiles(t, filepath.Join("..", d.Name())) {
			f, err := parser.ParseFile(fset, file, nil, 0)
			require.NoError(t, err)
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok {
					continue
				}
				if strings.HasSuffix(file, "_test.go") {
					tests[d.Name()+"."+fn.Name.Name] = true
				} else if buildsPermission(fn) {
					builders = append(builders, d.Name()+"."+fn.Name.Name)
				}
			}
		}
	}
	require.Contains(t, builders, "kubeconfig.bindPermissions", "the walk finds permissions built outside this package")
	for _, b := range builders {
		test, ok := elsewhere[b]
		if !assert.True(t, ok, "%s builds a Permission itself: add it to elsewhere with the test that holds it to its content", b) {
			continue
		}
		pkg, _, _ := strings.Cut(b, ".")
		assert.True(t, tests[pkg+"."+test], "%s is held to its content by %s, which does not exist", b, test)
	}
}

// goFiles are the Go files of dir, tests included only outside this package.
func goFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	if dir == "." {
		files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
	}
	return files
}

// returnsPermissions reports whether fn returns a Permission or a []Permission (qualified by
// pkg when it is not empty).
func returnsPermissions(fn *ast.FuncDecl, pkg string) bool {
	if fn.Type.Results == nil {
		return false
	}
	for _, r := range fn.Type.Results.List {
		typ := r.Type
		if a, ok := typ.(*ast.ArrayType); ok {
			typ = a.Elt
		}
		if isPermission(typ, pkg) {
			return true
		}
	}
	return false
}

func isPermission(typ ast.Expr, pkg string) bool {
	switch e := typ.(type) {
	case *ast.Ident:
		return pkg == "" && e.Name == "Permission"
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && x.Name == "store" && e.Sel.Name == "Permission"
	}
	return false
}

// buildsPermission reports whether fn writes a store.Permission literal.
func buildsPermission(fn *ast.FuncDecl) bool {
	found := false
	ast.Inspect(fn, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok || lit.Type == nil {
			return !found
		}
		typ := lit.Type
		if a, ok := typ.(*ast.ArrayType); ok {
			typ = a.Elt
		}
		if isPermission(typ, "store") {
			found = true
		}
		return !found
	})
	return found
}
