package validation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func validCacheServer() *operator.CacheServer {
	etcd := validEtcd()
	// kcp v0.32 keeps a cache server's data under /cache whatever --etcd-prefix says.
	etcd.Prefix = "/cache"
	component := validComponentSpec("ca")
	component.Replicas = ptr[int32](3)
	// An external etcd needs kcp v0.31.0 or newer.
	component.Image.Tag = "v0.32.3"
	return &operator.CacheServer{
		ObjectMeta: validObjectMeta("cache"),
		Spec: operator.CacheServerSpec{
			ComponentSpec: component,
			ClusterDomain: "cluster.local",
			Etcd:          &etcd,
			Certificates:  &operator.Certificates{CASecretRef: &corev1.LocalObjectReference{Name: "cache-ca"}},
		},
	}
}

func TestValidateCacheServer(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.CacheServer)
		want   []wantErr
	}{
		{name: "valid", mutate: func(*operator.CacheServer) {}},
		{
			name:   "minimal",
			mutate: func(cs *operator.CacheServer) { cs.Spec = operator.CacheServerSpec{ClusterDomain: "cluster.local"} },
		},
		{
			name:   "name at the maximum length",
			mutate: func(cs *operator.CacheServer) { cs.Name = strings.Repeat("c", 50) },
		},
		{
			name:   "name too long for the Service name",
			mutate: func(cs *operator.CacheServer) { cs.Name = strings.Repeat("c", 51) },
			want:   []wantErr{invalid("metadata.name", "must be no more than 50 characters, so that the Service <name>-cache-server is a valid name")},
		},
		{
			name:   "cluster domain missing",
			mutate: func(cs *operator.CacheServer) { cs.Spec.ClusterDomain = "" },
			want:   []wantErr{required("spec.clusterDomain")},
		},
		{
			name:   "one replica without etcd",
			mutate: func(cs *operator.CacheServer) { cs.Spec.Etcd, cs.Spec.Replicas = nil, ptr[int32](1) },
		},
		{
			name:   "two replicas without etcd",
			mutate: func(cs *operator.CacheServer) { cs.Spec.Etcd, cs.Spec.Replicas = nil, ptr[int32](2) },
			want:   []wantErr{invalid("spec.replicas", "more than one replica requires spec.etcd, the embedded etcd cannot be shared")},
		},
		{
			name:   "negative replicas",
			mutate: func(cs *operator.CacheServer) { cs.Spec.Replicas = ptr[int32](-1) },
			want:   []wantErr{invalid("spec.replicas", "must be greater than or equal to 0")},
		},
		{
			name:   "external etcd on kcp v0.31.0",
			mutate: func(cs *operator.CacheServer) { cs.Spec.Image.Tag = "v0.31.0" },
		},
		{
			name:   "external etcd on the default kcp",
			mutate: func(cs *operator.CacheServer) { cs.Spec.Image = nil },
		},
		{
			name:   "external etcd on a kcp built from main",
			mutate: func(cs *operator.CacheServer) { cs.Spec.Image.Tag = "main" },
		},
		{
			name:   "external etcd on kcp v0.30.3",
			mutate: func(cs *operator.CacheServer) { cs.Spec.Image.Tag = "v0.30.3" },
			want:   []wantErr{forbidden("spec.etcd", "the cache server of kcp v0.30.3 has only its embedded etcd: an external etcd needs kcp v0.31.0 or newer (spec.image.tag)")},
		},
		{
			name: "embedded etcd on kcp v0.30.0",
			mutate: func(cs *operator.CacheServer) {
				cs.Spec.Etcd, cs.Spec.Replicas, cs.Spec.Image.Tag = nil, nil, "v0.30.0"
			},
		},
		{
			name:   "etcd is validated when set",
			mutate: func(cs *operator.CacheServer) { cs.Spec.Etcd.Endpoints = []string{"etcd"} },
			want:   []wantErr{invalid("spec.etcd.endpoints[0]")},
		},
		{
			name:   "certificates without a source",
			mutate: func(cs *operator.CacheServer) { cs.Spec.Certificates = &operator.Certificates{} },
			want:   []wantErr{required("spec.certificates", "one of issuerRef or caSecretRef is required")},
		},
		{
			name: "certificate template for a role a CacheServer does not have: ignored, and still checked",
			mutate: func(cs *operator.CacheServer) {
				cs.Spec.CertificateTemplates["kubeconfig"] = operator.CertificateTemplate{Spec: &operator.CertificateSpecTemplate{DNSNames: []string{"Not A Name"}}}
			},
			want: []wantErr{invalid("spec.certificateTemplates[kubeconfig].spec.dnsNames[0]")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := validCacheServer()
			tc.mutate(cs)
			assertErrors(t, tc.want, ValidateCacheServer(cs))
		})
	}
}

func TestValidateCacheServerUpdate(t *testing.T) {
	tests := []struct {
		name      string
		mutateOld func(*operator.CacheServer)
		mutate    func(*operator.CacheServer)
		want      []wantErr
	}{
		{name: "unchanged", mutate: func(*operator.CacheServer) {}},
		{
			name:   "mutable field changed",
			mutate: func(cs *operator.CacheServer) { cs.Spec.Logging = nil },
		},
		{
			name:   "certificates changed",
			mutate: func(cs *operator.CacheServer) { cs.Spec.Certificates.CASecretRef.Name = "other-ca" },
			want:   []wantErr{invalid("spec.certificates", "field is immutable")},
		},
		{
			name:      "certificates added to a setup on the bootstrap PKI",
			mutateOld: func(cs *operator.CacheServer) { cs.Spec.Certificates = nil },
			mutate:    func(*operator.CacheServer) {},
			want:      []wantErr{invalid("spec.certificates", "field is immutable")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldObj, newObj := validCacheServer(), validCacheServer()
			oldObj.ObjectMeta, newObj.ObjectMeta = updatedObjectMeta("cache"), updatedObjectMeta("cache")
			if tc.mutateOld != nil {
				tc.mutateOld(oldObj)
			}
			tc.mutate(newObj)
			assertErrors(t, tc.want, ValidateCacheServerUpdate(newObj, oldObj))
		})
	}
}

func TestValidateCacheServerStatusUpdate(t *testing.T) {
	tests := []struct {
		name   string
		status operator.CacheServerStatus
		want   []wantErr
	}{
		{name: "valid", status: operator.CacheServerStatus{Phase: operator.PhaseRunning}},
		{name: "unknown phase", status: operator.CacheServerStatus{Phase: "running"}, want: []wantErr{notSupported("status.phase")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldObj, newObj := validCacheServer(), validCacheServer()
			oldObj.ObjectMeta, newObj.ObjectMeta = updatedObjectMeta("cache"), updatedObjectMeta("cache")
			newObj.Status = tc.status
			assertErrors(t, tc.want, ValidateCacheServerStatusUpdate(newObj, oldObj))
		})
	}
}

func TestValidateCacheServerNil(t *testing.T) {
	assert.NotEmpty(t, ValidateCacheServer(nil))
	assert.NotEmpty(t, ValidateCacheServerUpdate(nil, nil))
	assert.NotEmpty(t, ValidateCacheServerStatusUpdate(nil, nil))
}

// TestValidateCacheServerWiring checks that every shared piece of a CacheServer is validated
// at its own path.
func TestValidateCacheServerWiring(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.CacheServerSpec)
		want   []wantErr
	}{
		{
			name:   "image",
			mutate: func(s *operator.CacheServerSpec) { s.Image.ImagePullSecrets = []corev1.LocalObjectReference{{}} },
			want:   []wantErr{required("spec.image.imagePullSecrets[0].name")},
		},
		{
			name: "resources",
			mutate: func(s *operator.CacheServerSpec) {
				s.Resources.Requests = corev1.ResourceList{"cpu": resourceQuantity("3")}
			},
			want: []wantErr{invalid("spec.resources.requests[cpu]")},
		},
		{
			name:   "service template",
			mutate: func(s *operator.CacheServerSpec) { s.ServiceTemplate.Spec.Type = "Internal" },
			want:   []wantErr{notSupported("spec.serviceTemplate.spec.type")},
		},
		{
			name: "deployment template",
			mutate: func(s *operator.CacheServerSpec) {
				s.DeploymentTemplate.Spec.Template.Spec.HostAliases = []corev1.HostAlias{{IP: "::1", Hostnames: []string{"A"}}}
			},
			want: []wantErr{invalid("spec.deploymentTemplate.spec.template.spec.hostAliases[0].hostnames[0]")},
		},
		{
			name:   "extras",
			mutate: func(s *operator.CacheServerSpec) { s.ExtraVolumeMounts[0].MountPath = "relative" },
			want:   []wantErr{invalid("spec.extraVolumeMounts[0].mountPath")},
		},
		{
			name:   "logging",
			mutate: func(s *operator.CacheServerSpec) { s.Logging.Level = -3 },
			want:   []wantErr{invalid("spec.logging.level")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := validCacheServer()
			tc.mutate(&cs.Spec)
			assertErrors(t, tc.want, ValidateCacheServer(cs))
		})
	}
}
