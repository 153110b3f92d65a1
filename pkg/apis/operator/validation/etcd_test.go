package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestValidateEtcdConfig(t *testing.T) {
	fldPath := field.NewPath("spec", "etcd")
	tests := []struct {
		name   string
		mutate func(*operator.EtcdConfig)
		want   []wantErr
	}{
		{name: "valid", mutate: func(*operator.EtcdConfig) {}},
		{
			name:   "only endpoints",
			mutate: func(e *operator.EtcdConfig) { *e = operator.EtcdConfig{Endpoints: []string{"http://etcd:2379"}} },
		},
		{
			name:   "no endpoints",
			mutate: func(e *operator.EtcdConfig) { e.Endpoints = nil },
			want:   []wantErr{required("spec.etcd.endpoints")},
		},
		{
			name:   "empty endpoint",
			mutate: func(e *operator.EtcdConfig) { e.Endpoints = []string{""} },
			want:   []wantErr{required("spec.etcd.endpoints[0]")},
		},
		{
			name: "endpoint without a scheme, as kcp-operator accepts it",
			mutate: func(e *operator.EtcdConfig) {
				e.Endpoints = append(e.Endpoints, "etcd-2.etcd:2379", "10.0.0.3:2379", "[fd00::3]:2379")
			},
		},
		{
			name:   "endpoint without a scheme and without a port",
			mutate: func(e *operator.EtcdConfig) { e.Endpoints = append(e.Endpoints, "etcd-2.etcd") },
			want:   []wantErr{invalid("spec.etcd.endpoints[2]", "or host:port such as etcd.example.com:2379")},
		},
		{
			name:   "endpoint without a scheme, with a bad host and port",
			mutate: func(e *operator.EtcdConfig) { e.Endpoints = append(e.Endpoints, "Etcd_2:http") },
			want: []wantErr{
				invalid("spec.etcd.endpoints[2]", "the host must be an IP address or a lower case DNS name"),
				invalid("spec.etcd.endpoints[2]", "port must be between 1 and 65535"),
			},
		},
		{
			name:   "the same endpoint with and without a scheme",
			mutate: func(e *operator.EtcdConfig) { e.Endpoints = []string{"etcd-0.etcd:2379", "etcd-0.etcd:2379"} },
			want:   []wantErr{duplicate("spec.etcd.endpoints[1]")},
		},
		{
			name:   "endpoint with a path",
			mutate: func(e *operator.EtcdConfig) { e.Endpoints[0] = "https://etcd-0.etcd:2379/v3" },
			want:   []wantErr{invalid("spec.etcd.endpoints[0]", "may not contain a path")},
		},
		{
			name:   "endpoint with user info",
			mutate: func(e *operator.EtcdConfig) { e.Endpoints[0] = "https://root:secret@etcd-0.etcd:2379" },
			want:   []wantErr{invalid("spec.etcd.endpoints[0]", "may not contain user information")},
		},
		{
			name:   "endpoint with a query",
			mutate: func(e *operator.EtcdConfig) { e.Endpoints[0] = "https://etcd-0.etcd:2379?x=y" },
			want:   []wantErr{invalid("spec.etcd.endpoints[0]", "may not contain a query")},
		},
		{
			name:   "duplicate endpoint",
			mutate: func(e *operator.EtcdConfig) { e.Endpoints = append(e.Endpoints, "https://etcd-0.etcd:2379") },
			want:   []wantErr{duplicate("spec.etcd.endpoints[2]")},
		},
		{
			name:   "duplicate endpoint up to a trailing slash",
			mutate: func(e *operator.EtcdConfig) { e.Endpoints = append(e.Endpoints, "https://etcd-1.etcd:2379") },
			want:   []wantErr{duplicate("spec.etcd.endpoints[2]")},
		},
		{
			name:   "TLS secret without a name",
			mutate: func(e *operator.EtcdConfig) { e.TLSConfig.SecretRef = corev1.LocalObjectReference{} },
			want:   []wantErr{required("spec.etcd.tlsConfig.secretRef.name")},
		},
		{
			name:   "TLS secret name not a DNS-1123 subdomain",
			mutate: func(e *operator.EtcdConfig) { e.TLSConfig.SecretRef.Name = "Etcd_Client" },
			want:   []wantErr{invalid("spec.etcd.tlsConfig.secretRef.name")},
		},
		{
			name:   "prefix without a leading slash, as kcp-operator accepts it",
			mutate: func(e *operator.EtcdConfig) { e.Prefix = "kcp" },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			etcd := validEtcd()
			tc.mutate(&etcd)
			assertErrors(t, tc.want, validateEtcdConfig(&etcd, fldPath))
		})
	}
}

func TestValidateEtcdConfigNil(t *testing.T) {
	assertErrors(t, nil, validateEtcdConfig(nil, field.NewPath("spec", "etcd")))
}
