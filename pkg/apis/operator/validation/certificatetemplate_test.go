package validation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestValidateCertificateTemplate(t *testing.T) {
	const p = "spec.certificateTemplates[server]"
	tests := []struct {
		name   string
		mutate func(*operator.CertificateTemplate)
		want   []wantErr
	}{
		{name: "valid", mutate: func(*operator.CertificateTemplate) {}},
		{name: "empty", mutate: func(tmpl *operator.CertificateTemplate) { *tmpl = operator.CertificateTemplate{} }},
		{
			name:   "empty spec",
			mutate: func(tmpl *operator.CertificateTemplate) { tmpl.Spec = &operator.CertificateSpecTemplate{} },
		},
		{
			name:   "bad label",
			mutate: func(tmpl *operator.CertificateTemplate) { tmpl.Metadata.Labels = map[string]string{"team": "a b"} },
			want:   []wantErr{invalid(p + ".metadata.labels")},
		},
		{
			name:   "bad annotation key",
			mutate: func(tmpl *operator.CertificateTemplate) { tmpl.Metadata.Annotations = map[string]string{"-x": "y"} },
			want:   []wantErr{invalid(p + ".metadata.annotations")},
		},
		{
			name: "empty subject attributes",
			mutate: func(tmpl *operator.CertificateTemplate) {
				tmpl.Spec.Subject = &operator.X509Subject{Organizations: []string{"ACME", ""}, PostalCodes: []string{""}, SerialNumber: "1"}
			},
			want: []wantErr{required(p + ".spec.subject.organizations[1]"), required(p + ".spec.subject.postalCodes[0]")},
		},
		{
			name: "bad DNS names",
			mutate: func(tmpl *operator.CertificateTemplate) {
				tmpl.Spec.DNSNames = []string{"", "a_b.example.com", "*.*.example.com", "*"}
			},
			want: []wantErr{
				required(p + ".spec.dnsNames[0]"), invalid(p + ".spec.dnsNames[1]"),
				invalid(p + ".spec.dnsNames[2]"), invalid(p + ".spec.dnsNames[3]"),
			},
		},
		{
			name: "bad IP addresses",
			mutate: func(tmpl *operator.CertificateTemplate) {
				tmpl.Spec.IPAddresses = []string{"", "10.0.0.300", "kcp.example.com"}
			},
			want: []wantErr{required(p + ".spec.ipAddresses[0]"), invalid(p + ".spec.ipAddresses[1]"), invalid(p + ".spec.ipAddresses[2]")},
		},
		{
			name: "duration below an hour",
			mutate: func(tmpl *operator.CertificateTemplate) {
				tmpl.Spec.Duration, tmpl.Spec.RenewBefore = duration("59m"), nil
			},
			want: []wantErr{invalid(p+".spec.duration", "must be at least 1h0m0s")},
		},
		{
			name:   "renewBefore below five minutes",
			mutate: func(tmpl *operator.CertificateTemplate) { tmpl.Spec.RenewBefore = duration("4m") },
			want:   []wantErr{invalid(p+".spec.renewBefore", "must be at least 5m0s")},
		},
		{
			name: "renewBefore not shorter than duration",
			mutate: func(tmpl *operator.CertificateTemplate) {
				tmpl.Spec.Duration, tmpl.Spec.RenewBefore = duration("2h"), duration("2h")
			},
			want: []wantErr{invalid(p+".spec.renewBefore", "must be less than duration (2h0m0s)")},
		},
		{
			name: "renewBefore without duration",
			mutate: func(tmpl *operator.CertificateTemplate) {
				tmpl.Spec.Duration, tmpl.Spec.RenewBefore = nil, duration("720h")
			},
		},
		{
			name: "bad secret template",
			mutate: func(tmpl *operator.CertificateTemplate) {
				tmpl.Spec.SecretTemplate.Labels = map[string]string{"a/b/c": "x"}
			},
			want: []wantErr{invalid(p + ".spec.secretTemplate.labels")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := validCertificateTemplate()
			tc.mutate(&tmpl)
			assertErrors(t, tc.want, validateCertificateTemplate(&tmpl, field.NewPath("spec", "certificateTemplates").Key("server")))
		})
	}
}

func TestValidatePrivateKey(t *testing.T) {
	const p = "spec.privateKey"
	tests := []struct {
		name string
		key  operator.CertificatePrivateKeyTemplate
		want []wantErr
	}{
		{name: "defaults", key: operator.CertificatePrivateKeyTemplate{}},
		{name: "RSA 8192", key: operator.CertificatePrivateKeyTemplate{Algorithm: "RSA", KeySize: 8192}},
		{name: "ECDSA 521", key: operator.CertificatePrivateKeyTemplate{Algorithm: "ECDSA", KeySize: 521}},
		{name: "Ed25519 without size", key: operator.CertificatePrivateKeyTemplate{Algorithm: "Ed25519"}},
		{name: "default algorithm with an ECDSA size", key: operator.CertificatePrivateKeyTemplate{KeySize: 384}},
		{name: "PKCS1, Never", key: operator.CertificatePrivateKeyTemplate{Encoding: "PKCS1", RotationPolicy: "Never"}},
		{
			name: "unknown algorithm",
			key:  operator.CertificatePrivateKeyTemplate{Algorithm: "DSA", KeySize: 1024},
			want: []wantErr{notSupported(p+".algorithm", `supported values: "RSA", "ECDSA", "Ed25519"`)},
		},
		{
			name: "RSA size",
			key:  operator.CertificatePrivateKeyTemplate{Algorithm: "RSA", KeySize: 1024},
			want: []wantErr{invalid(p+".size", "must be 0 (the default) or one of 2048, 4096, 8192 for algorithm RSA")},
		},
		{
			name: "ECDSA size",
			key:  operator.CertificatePrivateKeyTemplate{Algorithm: "ECDSA", KeySize: 2048},
			want: []wantErr{invalid(p+".size", "256, 384, 521 for algorithm ECDSA")},
		},
		{
			name: "default algorithm with an RSA size",
			key:  operator.CertificatePrivateKeyTemplate{KeySize: 2048},
			want: []wantErr{invalid(p+".size", "ECDSA (the default algorithm)")},
		},
		{
			name: "Ed25519 with a size",
			key:  operator.CertificatePrivateKeyTemplate{Algorithm: "Ed25519", KeySize: 256},
			want: []wantErr{invalid(p+".size", "must be 0 (unset) for algorithm Ed25519")},
		},
		{
			name: "unknown encoding and rotation policy",
			key:  operator.CertificatePrivateKeyTemplate{Encoding: "DER", RotationPolicy: "Sometimes"},
			want: []wantErr{notSupported(p + ".encoding"), notSupported(p + ".rotationPolicy")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validatePrivateKey(&tc.key, field.NewPath("spec", "privateKey")))
		})
	}
}

func TestValidateCertificateTemplateNil(t *testing.T) {
	assertErrors(t, nil, validateCertificateTemplate(nil, field.NewPath("spec", "certificateTemplate")))
	assertErrors(t, nil, validatePrivateKey(nil, field.NewPath("spec", "privateKey")))
	// Nil metadata and subject inside a template.
	tmpl := &operator.CertificateTemplate{Spec: &operator.CertificateSpecTemplate{DNSNames: []string{strings.Repeat("a", 10)}}}
	assertErrors(t, nil, validateCertificateTemplate(tmpl, field.NewPath("spec", "certificateTemplate")))
}
