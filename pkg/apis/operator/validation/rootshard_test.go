package validation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func validRootShard() *operator.RootShard {
	return &operator.RootShard{
		ObjectMeta: validObjectMeta("root"),
		Spec: operator.RootShardSpec{
			CommonShardSpec: validCommonShardSpec(),
			External: operator.ExternalConfig{
				Hostname: "kcp.example.com", Port: 6443,
				PrivateHostname: "kcp.internal", PrivatePort: ptr[int32](8443),
			},
			Cache:        &operator.CacheConfig{Reference: &corev1.LocalObjectReference{Name: "cache"}},
			Certificates: &operator.Certificates{IssuerRef: &operator.ObjectReference{Name: "ca", Kind: "ClusterIssuer", Group: "cert-manager.io"}},
		},
	}
}

func TestValidateRootShard(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.RootShard)
		want   []wantErr
	}{
		{name: "valid", mutate: func(*operator.RootShard) {}},
		{
			name:   "minimal",
			mutate: func(rs *operator.RootShard) { rs.Spec = minimalRootShardSpec() },
		},
		{
			name:   "name at the maximum length",
			mutate: func(rs *operator.RootShard) { rs.Name = strings.Repeat("a", 40) },
		},
		{
			name:   "name too long for its CAs' CommonNames",
			mutate: func(rs *operator.RootShard) { rs.Name = strings.Repeat("a", 41) },
			want: []wantErr{invalid("metadata.name", "must be no more than 40 characters, so that the CommonName <name>-requestheader-client-ca "+
				"of a certificate the server has cert-manager issue fits the 64 characters of RFC 5280")},
		},
		{
			name:   "name long enough for the Service name, too long for a CommonName",
			mutate: func(rs *operator.RootShard) { rs.Name = strings.Repeat("a", 59) },
			want:   []wantErr{invalid("metadata.name", "40 characters")},
		},
		{
			name:   "name not a DNS-1035 label",
			mutate: func(rs *operator.RootShard) { rs.Name = "1root" },
			want:   []wantErr{invalid("metadata.name", "DNS-1035 label")},
		},
		{
			name:   "missing namespace",
			mutate: func(rs *operator.RootShard) { rs.Namespace = "" },
			want:   []wantErr{required("metadata.namespace")},
		},
		{
			name:   "external hostname missing",
			mutate: func(rs *operator.RootShard) { rs.Spec.External.Hostname = "" },
			want:   []wantErr{required("spec.external.hostname")},
		},
		{
			name:   "external port out of range",
			mutate: func(rs *operator.RootShard) { rs.Spec.External.Port = 70000 },
			want:   []wantErr{invalid("spec.external.port", "spec.external.port: Invalid value: 70000: must be between 1 and 65535, inclusive")},
		},
		{
			name:   "cache without ref: the embedded cache, as kcp-operator's cache: {}",
			mutate: func(rs *operator.RootShard) { rs.Spec.Cache.Reference = nil },
		},
		{
			name: "cache by a copy of its cache-client Secret",
			mutate: func(rs *operator.RootShard) {
				rs.Spec.Cache = &operator.CacheConfig{SecretRef: ref("cache-cache-client")}
			},
		},
		{
			name: "cache secretRef with the embedded cache enabled",
			mutate: func(rs *operator.RootShard) {
				rs.Spec.Cache = &operator.CacheConfig{SecretRef: ref("cache-cache-client"), Embedded: &operator.EmbeddedCacheConfiguration{Enabled: true}}
			},
		},
		{
			name:   "cache over a link: a Shard's only",
			mutate: func(rs *operator.RootShard) { rs.Spec.Cache = &operator.CacheConfig{Link: link("eu-1-link-bootstrap")} },
			want: []wantErr{forbidden("spec.cache.link",
				"only a Shard uses a CacheServer over a link: a RootShard names its CacheServer by ref or secretRef")},
		},
		{
			name:   "cache ref not a DNS-1035 label",
			mutate: func(rs *operator.RootShard) { rs.Spec.Cache.Reference.Name = "Cache" },
			want:   []wantErr{invalid("spec.cache.ref.name")},
		},
		{
			name: "both certificate sources",
			mutate: func(rs *operator.RootShard) {
				rs.Spec.Certificates.CASecretRef = &corev1.LocalObjectReference{Name: "ca"}
			},
			want: []wantErr{forbidden("spec.certificates.caSecretRef")},
		},
		{
			name: "certificate template for a role a RootShard does not have: ignored, and still checked",
			mutate: func(rs *operator.RootShard) {
				rs.Spec.CertificateTemplates["kubeconfig"] = operator.CertificateTemplate{Spec: &operator.CertificateSpecTemplate{DNSNames: []string{"Not A Name"}}}
			},
			want: []wantErr{invalid("spec.certificateTemplates[kubeconfig].spec.dnsNames[0]")},
		},
		{
			name:   "CA certificate templates are allowed",
			mutate: func(rs *operator.RootShard) { rs.Spec.CertificateTemplates["root-ca"] = validCertificateTemplate() },
		},
		{
			name: "every fault is reported",
			mutate: func(rs *operator.RootShard) {
				rs.Spec.ClusterDomain = "Cluster_Local"
				rs.Spec.Etcd.Endpoints = nil
				rs.Spec.External.Port = 0
				rs.Spec.Replicas = ptr[int32](-1)
				rs.Spec.Logging.Level = 11
			},
			want: []wantErr{
				invalid("spec.clusterDomain"),
				required("spec.etcd.endpoints"),
				invalid("spec.external.port"),
				invalid("spec.replicas"),
				invalid("spec.logging.level"),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := validRootShard()
			tc.mutate(rs)
			assertErrors(t, tc.want, ValidateRootShard(rs))
		})
	}
}

// minimalRootShardSpec has only what a RootShard requires; every optional pointer is nil.
func minimalRootShardSpec() operator.RootShardSpec {
	return operator.RootShardSpec{
		CommonShardSpec: operator.CommonShardSpec{
			ClusterDomain: "cluster.local",
			Etcd:          operator.EtcdConfig{Endpoints: []string{"http://etcd:2379"}},
		},
		External: operator.ExternalConfig{Hostname: "kcp.example.com", Port: 6443},
	}
}

func TestValidateRootShardUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.RootShard)
		want   []wantErr
	}{
		{name: "unchanged", mutate: func(*operator.RootShard) {}},
		{
			name:   "mutable field changed",
			mutate: func(rs *operator.RootShard) { rs.Spec.Replicas = ptr[int32](5) },
		},
		{
			name: "certificates changed",
			mutate: func(rs *operator.RootShard) {
				rs.Spec.Certificates = &operator.Certificates{CASecretRef: &corev1.LocalObjectReference{Name: "other-ca"}}
			},
			want: []wantErr{invalid("spec.certificates", "field is immutable")},
		},
		{
			name:   "certificates removed",
			mutate: func(rs *operator.RootShard) { rs.Spec.Certificates = nil },
			want:   []wantErr{invalid("spec.certificates", "field is immutable")},
		},
		{
			name:   "name changed",
			mutate: func(rs *operator.RootShard) { rs.Name = "other" },
			want:   []wantErr{invalid("metadata.name", "field is immutable")},
		},
		{
			name:   "new spec is validated",
			mutate: func(rs *operator.RootShard) { rs.Spec.External.Hostname = "Not_A_Host" },
			want:   []wantErr{invalid("spec.external.hostname")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldObj := validRootShard()
			oldObj.ObjectMeta = updatedObjectMeta("root")
			newObj := validRootShard()
			newObj.ObjectMeta = updatedObjectMeta("root")
			tc.mutate(newObj)
			assertErrors(t, tc.want, ValidateRootShardUpdate(newObj, oldObj))
		})
	}
}

func TestValidateRootShardStatusUpdate(t *testing.T) {
	condition := metav1.Condition{
		Type: "Available", Status: metav1.ConditionTrue, Reason: "DeploymentAvailable",
		LastTransitionTime: metav1.Now(), ObservedGeneration: 1,
	}
	tests := []struct {
		name   string
		status operator.RootShardStatus
		want   []wantErr
	}{
		{
			name: "valid",
			status: operator.RootShardStatus{
				Phase: operator.PhaseRunning, ObservedGeneration: 1, Conditions: []metav1.Condition{condition},
				Shards: []operator.ShardReference{{Name: "shard-a"}, {Name: "shard-b"}},
			},
		},
		{name: "empty", status: operator.RootShardStatus{}},
		{
			name:   "unknown phase",
			status: operator.RootShardStatus{Phase: "Ready"},
			want:   []wantErr{notSupported("status.phase")},
		},
		{
			name:   "negative observedGeneration",
			status: operator.RootShardStatus{ObservedGeneration: -1},
			want:   []wantErr{invalid("status.observedGeneration")},
		},
		{
			name:   "condition without a reason",
			status: operator.RootShardStatus{Conditions: []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue, LastTransitionTime: metav1.Now()}}},
			want:   []wantErr{required("status.conditions[0].reason")},
		},
		{
			name:   "shard name not a DNS-1035 label",
			status: operator.RootShardStatus{Shards: []operator.ShardReference{{Name: "Shard"}, {Name: ""}}},
			want:   []wantErr{invalid("status.shards[0].name"), required("status.shards[1].name")},
		},
		{
			name:   "duplicate shard",
			status: operator.RootShardStatus{Shards: []operator.ShardReference{{Name: "a"}, {Name: "a"}}},
			want:   []wantErr{duplicate("status.shards[1].name")},
		},
		{
			name: "a linked Shard of the same name as a local one, and two Links' Shards of one name",
			status: operator.RootShardStatus{Shards: []operator.ShardReference{{Name: "a"}, {Name: "a", Link: "eu-1", Namespace: "b"},
				{Name: "a", Link: "eu-2", Namespace: "b"}, {Name: "a.eu", Link: "eu-2", Namespace: "b"}}},
		},
		{
			name: "a linked Shard twice, without a namespace, or a local one with one",
			status: operator.RootShardStatus{Shards: []operator.ShardReference{{Name: "a", Link: "eu-1", Namespace: "b"}, {Name: "a", Link: "eu-1", Namespace: "b"},
				{Name: "c", Link: "eu-1"}, {Name: "d", Namespace: "b"}, {Name: "e", Link: "EU", Namespace: "b"}}},
			want: []wantErr{duplicate("status.shards[1].name"), invalid("status.shards[2].namespace"), forbidden("status.shards[3].namespace"),
				invalid("status.shards[4].link")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldObj := validRootShard()
			oldObj.ObjectMeta = updatedObjectMeta("root")
			newObj := validRootShard()
			newObj.ObjectMeta = updatedObjectMeta("root")
			// The spec is not validated on a status update: the registry keeps the old one.
			newObj.Spec.External.Port = 0
			newObj.Status = tc.status
			assertErrors(t, tc.want, ValidateRootShardStatusUpdate(newObj, oldObj))
		})
	}
}

func TestValidateRootShardNil(t *testing.T) {
	assert.NotEmpty(t, ValidateRootShard(nil))
	assert.NotEmpty(t, ValidateRootShardUpdate(nil, validRootShard()))
	assert.NotEmpty(t, ValidateRootShardStatusUpdate(validRootShard(), nil))
}
