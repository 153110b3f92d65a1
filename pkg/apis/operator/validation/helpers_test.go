package validation

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// wantErr is one expected field error. detail, when set, must occur in the error's message.
type wantErr struct {
	typ    field.ErrorType
	field  string
	detail string
}

func invalid(path string, detail ...string) wantErr {
	return wantErr{typ: field.ErrorTypeInvalid, field: path, detail: strings.Join(detail, "")}
}

func required(path string, detail ...string) wantErr {
	return wantErr{typ: field.ErrorTypeRequired, field: path, detail: strings.Join(detail, "")}
}

func forbidden(path string, detail ...string) wantErr {
	return wantErr{typ: field.ErrorTypeForbidden, field: path, detail: strings.Join(detail, "")}
}

func notSupported(path string, detail ...string) wantErr {
	return wantErr{typ: field.ErrorTypeNotSupported, field: path, detail: strings.Join(detail, "")}
}

func duplicate(path string) wantErr {
	return wantErr{typ: field.ErrorTypeDuplicate, field: path}
}

func notFound(path string) wantErr {
	return wantErr{typ: field.ErrorTypeNotFound, field: path}
}

// assertErrors checks that got holds exactly the wanted errors, in any order: one error per
// fault, nothing missing and nothing extra.
func assertErrors(t *testing.T, want []wantErr, got field.ErrorList) {
	t.Helper()
	used := make([]bool, len(got))
	for _, w := range want {
		found := false
		for i, g := range got {
			if used[i] || g.Type != w.typ || g.Field != w.field || !strings.Contains(g.Error(), w.detail) {
				continue
			}
			used[i], found = true, true
			break
		}
		assert.Truef(t, found, "missing error %s at %s (detail %q); got:\n%s", w.typ, w.field, w.detail, render(got))
	}
	for i, g := range got {
		assert.Truef(t, used[i], "unexpected error: %v", g)
	}
}

func render(errs field.ErrorList) string {
	if len(errs) == 0 {
		return "  (none)"
	}
	var b strings.Builder
	for _, e := range errs {
		b.WriteString("  " + e.Error() + "\n")
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }

func duration(s string) *metav1.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return &metav1.Duration{Duration: d}
}

// validObjectMeta is the metadata of a freshly created namespaced object.
func validObjectMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "team-a"}
}

// updatedObjectMeta is the metadata of a stored object, as an update carries it.
func updatedObjectMeta(name string) metav1.ObjectMeta {
	meta := validObjectMeta(name)
	meta.ResourceVersion = "42"
	return meta
}

// validEtcd is an etcd configuration with every field set.
func validEtcd() operator.EtcdConfig {
	return operator.EtcdConfig{
		Endpoints: []string{"https://etcd-0.etcd:2379", "https://etcd-1.etcd:2379/"},
		TLSConfig: &operator.EtcdTLSConfig{SecretRef: corev1.LocalObjectReference{Name: "etcd-client"}},
		Prefix:    "/kcp",
	}
}

// validCertificateTemplate is a certificate template with every field set.
func validCertificateTemplate() operator.CertificateTemplate {
	return operator.CertificateTemplate{
		Metadata: &operator.MetadataTemplate{Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"example.com/x": "y"}},
		Spec: &operator.CertificateSpecTemplate{
			Subject:        &operator.X509Subject{Organizations: []string{"ACME"}, Countries: []string{"DE"}},
			DNSNames:       []string{"kcp.example.com", "*.kcp.example.com"},
			IPAddresses:    []string{"10.0.0.1", "2001:db8::1"},
			Duration:       duration("2160h"),
			RenewBefore:    duration("360h"),
			PrivateKey:     &operator.CertificatePrivateKeyTemplate{Algorithm: "RSA", KeySize: 4096, Encoding: "PKCS8", RotationPolicy: "Never"},
			SecretTemplate: &operator.MetadataTemplate{Labels: map[string]string{"team": "a"}},
		},
	}
}

// validCommonShardSpec is a CommonShardSpec with every field set to a valid value.
func validCommonShardSpec() operator.CommonShardSpec {
	return operator.CommonShardSpec{
		ComponentSpec: validComponentSpec("server"),
		ClusterDomain: "cluster.local",
		ShardBaseURL:  "https://shard.example.com:6443",
		Etcd:          validEtcd(),
		Audit: &operator.AuditSpec{
			Policy:  &operator.AuditPolicySpec{ConfigMap: &operator.LocalDataKeyReference{Name: "audit", Key: "policy.yaml"}},
			Webhook: &operator.AuditWebhookSpec{ConfigSecretName: "audit-webhook", Mode: "batch", BatchThrottleQPS: "10"},
		},
		Authorization: &operator.AuthorizationSpec{Webhook: &operator.AuthorizationWebhookSpec{
			ConfigSecretName: "authz-webhook", Version: "v1",
		}, AllowPaths: []string{"/healthz"}, Order: []string{"AlwaysAllowGroups", "AlwaysAllowPaths", "RBAC", "Webhook"}},
		Auth: &operator.AuthSpec{
			OIDC: &operator.OIDCConfiguration{IssuerURL: "https://dex.example.com", ClientID: "kcp"},
		},
		CABundleSecretRef: &corev1.LocalObjectReference{Name: "extra-ca"},
		ClientCABundleRef: &corev1.LocalObjectReference{Name: "extra-client-ca"},
	}
}

// validComponentSpec is a ComponentSpec with every field set to a valid value and a
// certificate template for the given role.
func validComponentSpec(role string) operator.ComponentSpec {
	return operator.ComponentSpec{
		Image:    &operator.ImageSpec{Repository: "ghcr.io/kcp-dev/kcp", Tag: "v0.29.0", ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}},
		Replicas: ptr[int32](2),
		Resources: &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		},
		CertificateTemplates: operator.CertificateTemplateMap{role: validCertificateTemplate()},
		ServiceTemplate:      &operator.ServiceTemplate{Spec: &operator.ServiceSpecTemplate{Type: corev1.ServiceTypeClusterIP}},
		DeploymentTemplate: &operator.DeploymentTemplate{Spec: &operator.DeploymentSpecTemplate{Template: &operator.PodTemplateSpec{
			Spec: &operator.PodSpecTemplate{NodeSelector: map[string]string{"kubernetes.io/os": "linux"}},
		}}},
		ExtraArgs:         []string{"--v=2"},
		ExtraVolumes:      []corev1.Volume{{Name: "extra"}},
		ExtraVolumeMounts: []corev1.VolumeMount{{Name: "extra", MountPath: "/var/extra"}},
		Logging:           &operator.LoggingSpec{Level: 4},
	}
}

func resourceQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// ref is a reference to the object named name.
func ref(name string) *corev1.LocalObjectReference { return &corev1.LocalObjectReference{Name: name} }

// link is a link naming the bootstrap Secret bootstrap.
func link(bootstrap string) *operator.RootShardLink {
	return &operator.RootShardLink{SecretRef: corev1.LocalObjectReference{Name: bootstrap}}
}
