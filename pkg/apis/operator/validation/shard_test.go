package validation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func validShard() *operator.Shard {
	spec := validCommonShardSpec()
	spec.CertificateTemplates = operator.CertificateTemplateMap{"service-account": validCertificateTemplate()}
	return &operator.Shard{
		ObjectMeta: validObjectMeta("shard-a"),
		Spec: operator.ShardSpec{
			CommonShardSpec: spec,
			RootShard:       operator.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}},
			Cache:           &operator.CacheConfig{Reference: &corev1.LocalObjectReference{Name: "cache"}},
		},
	}
}

func TestValidateShard(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.Shard)
		want   []wantErr
	}{
		{name: "valid", mutate: func(*operator.Shard) {}},
		{
			name: "minimal",
			mutate: func(s *operator.Shard) {
				s.Spec = operator.ShardSpec{
					CommonShardSpec: minimalRootShardSpec().CommonShardSpec,
					RootShard:       operator.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}},
				}
			},
		},
		{
			name:   "name at the maximum length",
			mutate: func(s *operator.Shard) { s.Name = strings.Repeat("s", 48) },
		},
		{
			name:   "name too long for its certificates' CommonNames",
			mutate: func(s *operator.Shard) { s.Name = strings.Repeat("s", 49) },
			want: []wantErr{invalid("metadata.name", "must be no more than 48 characters, so that the CommonName <name>-shard-etcd-peer "+
				"of a certificate the server has cert-manager issue fits the 64 characters of RFC 5280")},
		},
		{
			name:   "name longer than any label is reported once",
			mutate: func(s *operator.Shard) { s.Name = strings.Repeat("s", 64) },
			want:   []wantErr{invalid("metadata.name", "48 characters")},
		},
		{
			name:   "rootShard without ref",
			mutate: func(s *operator.Shard) { s.Spec.RootShard.Reference = nil },
			want:   []wantErr{required("spec.rootShard", "one of ref, secretRef or link is required")},
		},
		{
			name: "rootShard by a copy of its join Secret",
			mutate: func(s *operator.Shard) {
				s.Spec.RootShard = operator.RootShardConfig{SecretRef: ref("root.shard-join")}
			},
		},
		{
			name:   "rootShard by ref and secretRef",
			mutate: func(s *operator.Shard) { s.Spec.RootShard.SecretRef = ref("root-shard-join") },
			want:   []wantErr{forbidden("spec.rootShard.secretRef", "only one of ref, secretRef or link may be set")},
		},
		{
			name: "rootShard secretRef not a Secret name",
			mutate: func(s *operator.Shard) {
				s.Spec.RootShard = operator.RootShardConfig{SecretRef: ref("Root_Join")}
			},
			want: []wantErr{invalid("spec.rootShard.secretRef.name")},
		},
		{
			name: "rootShard secretRef without a name",
			mutate: func(s *operator.Shard) {
				s.Spec.RootShard = operator.RootShardConfig{SecretRef: ref("")}
			},
			want: []wantErr{required("spec.rootShard.secretRef.name")},
		},
		{
			name: "rootShard by a link",
			mutate: func(s *operator.Shard) {
				s.Spec.RootShard = operator.RootShardConfig{Link: link("eu-1-link-bootstrap")}
			},
		},
		{
			name:   "rootShard by ref and link",
			mutate: func(s *operator.Shard) { s.Spec.RootShard.Link = link("eu-1-link-bootstrap") },
			want:   []wantErr{forbidden("spec.rootShard.link", "only one of ref, secretRef or link may be set")},
		},
		{
			name: "rootShard by secretRef and link",
			mutate: func(s *operator.Shard) {
				s.Spec.RootShard = operator.RootShardConfig{SecretRef: ref("root-shard-join"), Link: link("eu-1-link-bootstrap")}
			},
			want: []wantErr{forbidden("spec.rootShard.link", "only one of ref, secretRef or link may be set")},
		},
		{
			name: "rootShard link not a Secret name",
			mutate: func(s *operator.Shard) {
				s.Spec.RootShard = operator.RootShardConfig{Link: link("EU_1")}
			},
			want: []wantErr{invalid("spec.rootShard.link.secretRef.name")},
		},
		{
			name: "rootShard link without a Secret name",
			mutate: func(s *operator.Shard) {
				s.Spec.RootShard = operator.RootShardConfig{Link: &operator.RootShardLink{}}
			},
			want: []wantErr{required("spec.rootShard.link.secretRef.name")},
		},
		{
			name:   "cache by a copy of its cache-client Secret",
			mutate: func(s *operator.Shard) { s.Spec.Cache = &operator.CacheConfig{SecretRef: ref("cache-cache-client")} },
		},
		{
			name: "cache by ref and secretRef",
			mutate: func(s *operator.Shard) {
				s.Spec.Cache = &operator.CacheConfig{Reference: ref("cache"), SecretRef: ref("cache-cache-client")}
			},
			want: []wantErr{forbidden("spec.cache.secretRef", "only one of ref, secretRef or link may be set")},
		},
		{
			name: "cache over the link of its RootShard",
			mutate: func(s *operator.Shard) {
				s.Spec.RootShard = operator.RootShardConfig{Link: link("eu-1-link-bootstrap")}
				s.Spec.Cache = &operator.CacheConfig{Link: link("eu-1-link-bootstrap")}
			},
		},
		{
			name:   "cache over a link, the RootShard not",
			mutate: func(s *operator.Shard) { s.Spec.Cache = &operator.CacheConfig{Link: link("eu-1-link-bootstrap")} },
			want:   []wantErr{invalid("spec.cache.link.secretRef.name")},
		},
		{
			name: "cache over another link than the RootShard's",
			mutate: func(s *operator.Shard) {
				s.Spec.RootShard = operator.RootShardConfig{Link: link("eu-1-link-bootstrap")}
				s.Spec.Cache = &operator.CacheConfig{Link: link("eu-2-link-bootstrap")}
			},
			want: []wantErr{invalid("spec.cache.link.secretRef.name")},
		},
		{
			name: "cache by secretRef and link",
			mutate: func(s *operator.Shard) {
				s.Spec.RootShard = operator.RootShardConfig{Link: link("eu-1-link-bootstrap")}
				s.Spec.Cache = &operator.CacheConfig{SecretRef: ref("cache-cache-client"), Link: link("eu-1-link-bootstrap")}
			},
			want: []wantErr{forbidden("spec.cache.link", "only one of ref, secretRef or link may be set")},
		},
		{
			name:   "cache link without a Secret name",
			mutate: func(s *operator.Shard) { s.Spec.Cache = &operator.CacheConfig{Link: &operator.RootShardLink{}} },
			want:   []wantErr{required("spec.cache.link.secretRef.name")},
		},
		{
			name: "cache link naming no valid Secret name",
			mutate: func(s *operator.Shard) {
				s.Spec.RootShard = operator.RootShardConfig{Link: link("Eu_1")}
				s.Spec.Cache = &operator.CacheConfig{Link: link("Eu_1")}
			},
			want: []wantErr{invalid("spec.rootShard.link.secretRef.name"), invalid("spec.cache.link.secretRef.name")},
		},
		{
			name:   "cache: {}, as kcp-operator's Go SDK may send it, is the RootShard's cache",
			mutate: func(s *operator.Shard) { s.Spec.Cache = &operator.CacheConfig{} },
		},
		{
			name:   "rootShard ref with an empty name",
			mutate: func(s *operator.Shard) { s.Spec.RootShard.Reference.Name = "" },
			want:   []wantErr{required("spec.rootShard.ref.name")},
		},
		{
			name:   "rootShard ref not a DNS-1035 label",
			mutate: func(s *operator.Shard) { s.Spec.RootShard.Reference.Name = "root.shard" },
			want:   []wantErr{invalid("spec.rootShard.ref.name")},
		},
		{
			name:   "cache ref with an empty name",
			mutate: func(s *operator.Shard) { s.Spec.Cache.Reference.Name = "" },
			want:   []wantErr{required("spec.cache.ref.name")},
		},
		{
			name: "CA certificate template on a Shard: ignored, and still checked",
			mutate: func(s *operator.Shard) {
				s.Spec.CertificateTemplates["root-ca"] = operator.CertificateTemplate{Spec: &operator.CertificateSpecTemplate{DNSNames: []string{"Not A Name"}}}
			},
			want: []wantErr{invalid("spec.certificateTemplates[root-ca].spec.dnsNames[0]")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validShard()
			tc.mutate(s)
			assertErrors(t, tc.want, ValidateShard(s))
		})
	}
}

func TestValidateShardUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.Shard)
		want   []wantErr
	}{
		{name: "unchanged", mutate: func(*operator.Shard) {}},
		{
			name:   "mutable field changed",
			mutate: func(s *operator.Shard) { s.Spec.Cache = nil },
		},
		{
			name:   "rootShard changed",
			mutate: func(s *operator.Shard) { s.Spec.RootShard.Reference.Name = "other-root" },
			want:   []wantErr{invalid("spec.rootShard.ref.name", "field is immutable")},
		},
		{
			name:   "rootShard removed",
			mutate: func(s *operator.Shard) { s.Spec.RootShard.Reference = nil },
			want:   []wantErr{required("spec.rootShard", "one of ref, secretRef or link is required")},
		},
		{
			name: "rootShard switched to a join Secret",
			mutate: func(s *operator.Shard) {
				s.Spec.RootShard = operator.RootShardConfig{SecretRef: ref("root-shard-join")}
			},
			want: []wantErr{invalid("spec.rootShard", "field is immutable")},
		},
		{
			name: "rootShard switched to a link",
			mutate: func(s *operator.Shard) {
				s.Spec.RootShard = operator.RootShardConfig{Link: link("eu-1-link-bootstrap")}
			},
			want: []wantErr{invalid("spec.rootShard", "field is immutable")},
		},
		{
			name:   "missing resourceVersion",
			mutate: func(s *operator.Shard) { s.ResourceVersion = "" },
			want:   []wantErr{invalid("metadata.resourceVersion")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldObj, newObj := validShard(), validShard()
			oldObj.ObjectMeta, newObj.ObjectMeta = updatedObjectMeta("shard-a"), updatedObjectMeta("shard-a")
			tc.mutate(newObj)
			assertErrors(t, tc.want, ValidateShardUpdate(newObj, oldObj))
		})
	}
}

func TestValidateShardStatusUpdate(t *testing.T) {
	tests := []struct {
		name   string
		status operator.ShardStatus
		want   []wantErr
	}{
		{name: "valid", status: operator.ShardStatus{Phase: operator.PhaseProvisioning, ObservedGeneration: 3}},
		{name: "unknown phase", status: operator.ShardStatus{Phase: "Ready"}, want: []wantErr{notSupported("status.phase")}},
		{name: "negative observedGeneration", status: operator.ShardStatus{ObservedGeneration: -2}, want: []wantErr{invalid("status.observedGeneration")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldObj, newObj := validShard(), validShard()
			oldObj.ObjectMeta, newObj.ObjectMeta = updatedObjectMeta("shard-a"), updatedObjectMeta("shard-a")
			newObj.Spec.RootShard.Reference = nil // not validated on a status update
			newObj.Status = tc.status
			assertErrors(t, tc.want, ValidateShardStatusUpdate(newObj, oldObj))
		})
	}
}

func TestValidateShardNil(t *testing.T) {
	assert.NotEmpty(t, ValidateShard(nil))
	assert.NotEmpty(t, ValidateShardUpdate(validShard(), nil))
	assert.NotEmpty(t, ValidateShardStatusUpdate(nil, nil))
}
