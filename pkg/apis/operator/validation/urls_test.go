package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateBaseURL(t *testing.T) {
	fldPath := field.NewPath("spec", "shardBaseURL")
	tests := []struct {
		name    string
		value   string
		schemes []string
		want    []wantErr
	}{
		{name: "https with port", value: "https://shard.example.com:6443", schemes: httpsSchemes},
		{name: "trailing slash", value: "https://shard.example.com/", schemes: httpsSchemes},
		{name: "http where allowed", value: "http://etcd:2379", schemes: httpOrHTTPSSchemes},
		{name: "IPv6 host", value: "https://[2001:db8::1]:2379", schemes: httpOrHTTPSSchemes},
		{
			name: "http where only https is allowed", value: "http://shard.example.com", schemes: httpsSchemes,
			want: []wantErr{invalid("spec.shardBaseURL", `must be a URL with the scheme "https"`)},
		},
		{
			name: "no scheme", value: "etcd-0:2379", schemes: httpOrHTTPSSchemes,
			want: []wantErr{invalid("spec.shardBaseURL", `must be a URL with the scheme "http" or "https"`)},
		},
		{
			name: "unparsable", value: "https://shard example.com", schemes: httpsSchemes,
			want: []wantErr{invalid("spec.shardBaseURL", "must be a valid URL")},
		},
		{
			name: "no host", value: "https:///path", schemes: httpsSchemes,
			want: []wantErr{invalid("spec.shardBaseURL", "must contain a host"), invalid("spec.shardBaseURL", "may not contain a path")},
		},
		{
			name: "port out of range", value: "https://shard.example.com:70000", schemes: httpsSchemes,
			want: []wantErr{invalid("spec.shardBaseURL", "port must be between 1 and 65535, inclusive")},
		},
		{
			name: "path", value: "https://shard.example.com/clusters", schemes: httpsSchemes,
			want: []wantErr{invalid("spec.shardBaseURL", "may not contain a path")},
		},
		{
			name: "query", value: "https://shard.example.com?x=1", schemes: httpsSchemes,
			want: []wantErr{invalid("spec.shardBaseURL", "may not contain a query")},
		},
		{
			name: "fragment", value: "https://shard.example.com#x", schemes: httpsSchemes,
			want: []wantErr{invalid("spec.shardBaseURL", "may not contain a fragment")},
		},
		{
			name: "user info", value: "https://user:pass@shard.example.com", schemes: httpsSchemes,
			want: []wantErr{invalid("spec.shardBaseURL", "may not contain user information")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateBaseURL(tc.value, tc.schemes, fldPath))
		})
	}
}

func TestValidateHTTPSURL(t *testing.T) {
	fldPath := field.NewPath("spec", "auth", "oidc", "issuerURL")
	tests := []struct {
		name  string
		value string
		want  []wantErr
	}{
		{name: "with a path", value: "https://keycloak.example.com/realms/kcp"},
		{name: "missing", value: "", want: []wantErr{required("spec.auth.oidc.issuerURL")}},
		{name: "http", value: "http://dex.example.com", want: []wantErr{invalid("spec.auth.oidc.issuerURL")}},
		{name: "no host", value: "https://", want: []wantErr{invalid("spec.auth.oidc.issuerURL", "must contain a host")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateHTTPSURL(tc.value, fldPath))
		})
	}
}
