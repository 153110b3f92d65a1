package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestValidateExternalConfig(t *testing.T) {
	tests := []struct {
		name string
		ext  operator.ExternalConfig
		want []wantErr
	}{
		{name: "valid", ext: operator.ExternalConfig{Hostname: "kcp.example.com", Port: 443, PrivateHostname: "kcp.internal", PrivatePort: ptr[int32](6443)}},
		{name: "hostname missing", ext: operator.ExternalConfig{Port: 6443}, want: []wantErr{required("spec.external.hostname")}},
		{name: "hostname upper case", ext: operator.ExternalConfig{Hostname: "KCP.example.com", Port: 6443}, want: []wantErr{invalid("spec.external.hostname")}},
		{name: "port 0", ext: operator.ExternalConfig{Hostname: "kcp.example.com"}, want: []wantErr{invalid("spec.external.port", "must be between 1 and 65535, inclusive")}},
		{name: "port too high", ext: operator.ExternalConfig{Hostname: "kcp.example.com", Port: 70000}, want: []wantErr{invalid("spec.external.port")}},
		{
			name: "private hostname not a DNS name",
			ext:  operator.ExternalConfig{Hostname: "kcp.example.com", Port: 6443, PrivateHostname: "kcp_internal"},
			want: []wantErr{invalid("spec.external.privateHostname")},
		},
		{
			name: "private port 0",
			ext:  operator.ExternalConfig{Hostname: "kcp.example.com", Port: 6443, PrivatePort: ptr[int32](0)},
			want: []wantErr{invalid("spec.external.privatePort")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateExternalConfig(&tc.ext, field.NewPath("spec", "external")))
		})
	}
}

func TestValidateFrontProxyExternalConfig(t *testing.T) {
	tests := []struct {
		name string
		ext  *operator.FrontProxyExternalConfig
		want []wantErr
	}{
		{name: "absent", ext: nil},
		{name: "inherit everything", ext: &operator.FrontProxyExternalConfig{}},
		{name: "valid", ext: &operator.FrontProxyExternalConfig{Hostname: "edge.example.com", Port: 443}},
		{name: "bad hostname", ext: &operator.FrontProxyExternalConfig{Hostname: "-edge"}, want: []wantErr{invalid("spec.external.hostname")}},
		{name: "negative port", ext: &operator.FrontProxyExternalConfig{Port: -1}, want: []wantErr{invalid("spec.external.port")}},
		{name: "private address", ext: &operator.FrontProxyExternalConfig{PrivateHostname: "edge.internal", PrivatePort: ptr[int32](8443)}},
		{name: "bad private hostname", ext: &operator.FrontProxyExternalConfig{PrivateHostname: "edge_internal"}, want: []wantErr{invalid("spec.external.privateHostname")}},
		{name: "zero private port", ext: &operator.FrontProxyExternalConfig{PrivatePort: ptr[int32](0)}, want: []wantErr{invalid("spec.external.privatePort")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateFrontProxyExternalConfig(tc.ext, field.NewPath("spec", "external")))
		})
	}
}
