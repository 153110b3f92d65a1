package validation

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	issuer := func(name, kind, group string) operator.CertificateTemplate {
		return operator.CertificateTemplate{Spec: &operator.CertificateSpecTemplate{
			IssuerRef: &operator.ObjectReference{Name: name, Kind: kind, Group: group}}}
	}
	acme := issuer("letsencrypt", "ClusterIssuer", "cert-manager.io")
	tests := []struct {
		name      string
		templates operator.CertificateTemplateMap
		roles     certificateRoles
		want      []wantErr
		// warnings are parts of the warnings expected, one per warning.
		warnings []string
	}{
		{name: "absent", roles: shardTemplates},
		{name: "known roles", templates: operator.CertificateTemplateMap{"server": {}, "client": {}}, roles: shardTemplates},
		{
			name:      "unknown role: ignored, as kcp-operator ignores it, with a warning",
			templates: operator.CertificateTemplateMap{"server": {}, "serving": {}},
			roles:     cacheServerTemplates,
			warnings: []string{`spec.certificateTemplates[serving] has no effect: "serving" names no certificate here and is ignored, as kcp-operator ignores it; ` +
				`the keys are "ca", "client", "root-ca", "server"`},
		},
		{
			name: "template content is validated at its key",
			templates: operator.CertificateTemplateMap{"server": {
				Spec: &operator.CertificateSpecTemplate{DNSNames: []string{"Not A Name"}},
			}},
			roles: frontProxyTemplates,
			want:  []wantErr{invalid("spec.certificateTemplates[server].spec.dnsNames[0]")},
		},
		// kcp-operator's keys.
		{name: "mounts-proxy on a Shard", templates: operator.CertificateTemplateMap{"mounts-proxy": {}}, roles: shardTemplates},
		{name: "mounts-proxy on a RootShard", templates: operator.CertificateTemplateMap{"mounts-proxy": {}}, roles: rootShardTemplates},
		{name: "root-ca on a CacheServer", templates: operator.CertificateTemplateMap{"root-ca": {}}, roles: cacheServerTemplates},
		{name: "ca on a CacheServer", templates: operator.CertificateTemplateMap{"ca": {}}, roles: cacheServerTemplates},
		{
			name:      "ca and root-ca together on a CacheServer",
			templates: operator.CertificateTemplateMap{"ca": {}, "root-ca": {}},
			roles:     cacheServerTemplates,
			want:      []wantErr{forbidden("spec.certificateTemplates[root-ca]", `may not be set together with "ca"`)},
		},
		{
			name:      "virtual-workspaces on a RootShard: the VirtualWorkspace templates its own",
			templates: operator.CertificateTemplateMap{"virtual-workspaces": {}},
			roles:     rootShardTemplates,
			warnings: []string{`spec.certificateTemplates[virtual-workspaces] has no effect: "virtual-workspaces" templates kcp-operator's <name>-virtual-workspaces certificate, which no pod of kcp-operator's mounts; ` +
				`kcp-setups does not issue it`},
		},
		{
			name:      "virtual-workspaces on a Shard",
			templates: operator.CertificateTemplateMap{"virtual-workspaces": {}},
			roles:     shardTemplates,
			warnings:  []string{`"virtual-workspaces" templates kcp-operator's`, `templated in its own spec.certificateTemplates (keys "server" and "client")`},
		},
		{
			name:      "kcp-operator on a RootShard templates the server's own identity toward kcp",
			templates: operator.CertificateTemplateMap{"kcp-operator": {}},
			roles:     rootShardTemplates,
		},
		{
			name:      "kcp-operator on a Shard is no key of kcp-operator's either",
			templates: operator.CertificateTemplateMap{"kcp-operator": {}},
			roles:     shardTemplates,
			warnings:  []string{`spec.certificateTemplates[kcp-operator] has no effect: "kcp-operator" names no certificate here`},
		},
		// Per-certificate issuers.
		{name: "issuerRef on a leaf", templates: operator.CertificateTemplateMap{"server": acme}, roles: frontProxyTemplates},
		{name: "issuerRef on an intermediate CA", templates: operator.CertificateTemplateMap{"server-ca": acme}, roles: rootShardTemplates},
		{name: "issuerRef of an external issuer", templates: operator.CertificateTemplateMap{"server": issuer("pca", "ClusterIssuer", "awspca.cert-manager.io")}, roles: shardTemplates},
		{
			name:      "issuerRef on the RootShard's root CA",
			templates: operator.CertificateTemplateMap{"root-ca": acme},
			roles:     rootShardTemplates,
			want:      []wantErr{forbidden("spec.certificateTemplates[root-ca].spec.issuerRef", "set spec.certificates.issuerRef instead")},
		},
		{
			name:      "issuerRef on the CacheServer's CA, by either key",
			templates: operator.CertificateTemplateMap{"ca": acme},
			roles:     cacheServerTemplates,
			want:      []wantErr{forbidden("spec.certificateTemplates[ca].spec.issuerRef", "spec.certificates.issuerRef")},
		},
		{
			name:      "issuerRef on the CacheServer's root-ca",
			templates: operator.CertificateTemplateMap{"root-ca": acme},
			roles:     cacheServerTemplates,
			want:      []wantErr{forbidden("spec.certificateTemplates[root-ca].spec.issuerRef", "spec.certificates.issuerRef")},
		},
		{
			name:      "issuerRef with a bad name, kind and group",
			templates: operator.CertificateTemplateMap{"server": issuer("Not An Issuer", "Vault", "not_a_group")},
			roles:     frontProxyTemplates,
			want: []wantErr{
				invalid("spec.certificateTemplates[server].spec.issuerRef.name"),
				notSupported("spec.certificateTemplates[server].spec.issuerRef.kind"),
				invalid("spec.certificateTemplates[server].spec.issuerRef.group"),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateCertificateTemplates(tc.templates, tc.roles, fldPath))
			warnings := certificateTemplateWarnings(tc.templates, tc.roles, fldPath)
			if len(tc.warnings) == 0 {
				assert.Empty(t, warnings)
				return
			}
			// Both parts of the virtual-workspaces case are in its one warning.
			require.Len(t, warnings, 1)
			for _, part := range tc.warnings {
				assert.Contains(t, warnings[0], part)
			}
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
