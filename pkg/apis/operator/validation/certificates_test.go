package validation

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestValidateCertificates(t *testing.T) {
	issuer := func(name, kind, group string) *operator.ObjectReference {
		return &operator.ObjectReference{Name: name, Kind: kind, Group: group}
	}
	secret := &corev1.LocalObjectReference{Name: "root-ca"}
	tests := []struct {
		name  string
		certs *operator.Certificates
		want  []wantErr
	}{
		{name: "absent: bootstrap PKI", certs: nil},
		{name: "Issuer", certs: &operator.Certificates{IssuerRef: issuer("ca", "Issuer", "cert-manager.io")}},
		{name: "ClusterIssuer", certs: &operator.Certificates{IssuerRef: issuer("ca", "ClusterIssuer", "cert-manager.io")}},
		{name: "CA secret", certs: &operator.Certificates{CASecretRef: secret}},
		{
			name:  "neither",
			certs: &operator.Certificates{},
			want:  []wantErr{required("spec.certificates", "one of issuerRef or caSecretRef is required")},
		},
		{
			name:  "both",
			certs: &operator.Certificates{IssuerRef: issuer("ca", "Issuer", "cert-manager.io"), CASecretRef: secret},
			want:  []wantErr{forbidden("spec.certificates.caSecretRef", "may not be set together with issuerRef")},
		},
		{
			name:  "issuer without a name",
			certs: &operator.Certificates{IssuerRef: issuer("", "Issuer", "cert-manager.io")},
			want:  []wantErr{required("spec.certificates.issuerRef.name")},
		},
		{
			name:  "unknown issuer kind",
			certs: &operator.Certificates{IssuerRef: issuer("ca", "Secret", "cert-manager.io")},
			want:  []wantErr{notSupported("spec.certificates.issuerRef.kind", `supported values: "ClusterIssuer", "Issuer"`)},
		},
		{
			name:  "issuer kind not defaulted",
			certs: &operator.Certificates{IssuerRef: issuer("ca", "", "cert-manager.io")},
			want:  []wantErr{notSupported("spec.certificates.issuerRef.kind")},
		},
		{
			name:  "issuer group not a DNS-1123 subdomain",
			certs: &operator.Certificates{IssuerRef: issuer("ca", "Issuer", "Cert_Manager")},
			want:  []wantErr{invalid("spec.certificates.issuerRef.group")},
		},
		{
			name:  "CA secret name not a DNS-1123 subdomain",
			certs: &operator.Certificates{CASecretRef: &corev1.LocalObjectReference{Name: "Root CA"}},
			want:  []wantErr{invalid("spec.certificates.caSecretRef.name")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateCertificates(tc.certs, field.NewPath("spec", "certificates")))
		})
	}
}

func TestValidateCertificateTemplates(t *testing.T) {
	fldPath := field.NewPath("spec", "certificateTemplates")
	tests := []struct {
		name      string
		templates operator.CertificateTemplateMap
		roles     []string
		want      []wantErr
	}{
		{name: "absent", roles: ShardCertificateRoles},
		{name: "known roles", templates: operator.CertificateTemplateMap{"server": {}, "client": {}}, roles: ShardCertificateRoles},
		{
			name:      "unknown role",
			templates: operator.CertificateTemplateMap{"server": {}, "serving": {}},
			roles:     CacheServerCertificateRoles,
			want:      []wantErr{notSupported("spec.certificateTemplates", `Unsupported value: "serving": supported values: "ca", "client", "server"`)},
		},
		{
			name: "template content is validated at its key",
			templates: operator.CertificateTemplateMap{"server": {
				Spec: &operator.CertificateSpecTemplate{DNSNames: []string{"Not A Name"}},
			}},
			roles: FrontProxyCertificateRoles,
			want:  []wantErr{invalid("spec.certificateTemplates[server].spec.dnsNames[0]")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateCertificateTemplates(tc.templates, tc.roles, fldPath))
		})
	}
}

func TestCertificateRolesAreSorted(t *testing.T) {
	for name, roles := range map[string][]string{
		"RootShard": RootShardCertificateRoles, "Shard": ShardCertificateRoles,
		"FrontProxy": FrontProxyCertificateRoles, "CacheServer": CacheServerCertificateRoles,
	} {
		assert.Truef(t, slices.IsSorted(roles), "%s roles are not sorted: %v", name, roles)
	}
	// Every shard role is a root shard role too: a root shard is a shard.
	for _, role := range ShardCertificateRoles {
		assert.Contains(t, RootShardCertificateRoles, role)
	}
}
