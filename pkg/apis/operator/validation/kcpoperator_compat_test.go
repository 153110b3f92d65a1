package validation

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// The tests of what kcp-operator accepts and this server accepts as it does, with a warning
// where the meaning is deprecated or different (issue 27), and of the refusals that stay,
// whose errors say what to write instead.

func TestEtcdAsKcpOperatorAcceptsIt(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(*operator.EtcdConfig)
		warnings []string
	}{
		{name: "URLs and a prefix with a slash", mutate: func(*operator.EtcdConfig) {}},
		{
			name:   "an endpoint without a scheme, with client TLS",
			mutate: func(e *operator.EtcdConfig) { e.Endpoints = []string{"etcd-0.etcd:2379", "https://etcd-1.etcd:2379"} },
			warnings: []string{`spec.etcd.endpoints[0]: "etcd-0.etcd:2379" has no scheme: kcp's etcd client dials it with TLS exactly when spec.etcd.tlsConfig is set; ` +
				`write "https://etcd-0.etcd:2379"`},
		},
		{
			name: "an endpoint without a scheme, without client TLS",
			mutate: func(e *operator.EtcdConfig) {
				e.Endpoints, e.TLSConfig = []string{"10.0.0.1:2379"}, nil
			},
			warnings: []string{`spec.etcd.endpoints[0]: "10.0.0.1:2379" has no scheme: kcp's etcd client dials it with TLS exactly when spec.etcd.tlsConfig is set; ` +
				`write "http://10.0.0.1:2379"`},
		},
		{
			name:     "a prefix without a leading slash",
			mutate:   func(e *operator.EtcdConfig) { e.Prefix = "kcp/root" },
			warnings: []string{`spec.etcd.prefix: "kcp/root" does not start with '/': kcp stores its keys under "/kcp/root" all the same; write "/kcp/root"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := validRootShard()
			rs.Spec.Etcd = validEtcd()
			tc.mutate(&rs.Spec.Etcd)
			assertErrors(t, nil, ValidateRootShard(rs))
			assert.Equal(t, tc.warnings, RootShardWarnings(rs))

			s := validShard()
			s.Spec.Etcd = validEtcd()
			tc.mutate(&s.Spec.Etcd)
			assertErrors(t, nil, ValidateShard(s))
			assert.Equal(t, tc.warnings, ShardWarnings(s))

			cs := validCacheServer()
			cs.Spec.Etcd = new(validEtcd())
			tc.mutate(cs.Spec.Etcd)
			assertErrors(t, nil, ValidateCacheServer(cs))
			// A cache server of kcp v0.32 ignores the prefix, and says so.
			ignored := fmt.Sprintf("spec.etcd.prefix: the cache server of kcp v0.32.3 ignores --etcd-prefix and keeps its data under /cache; kcp honours %q from v0.33.0 on",
				cs.Spec.Etcd.Prefix)
			assert.Equal(t, append(slices.Clone(tc.warnings), ignored), CacheServerWarnings(cs))
			cs.Spec.Image.Tag = "main"
			assert.Equal(t, tc.warnings, CacheServerWarnings(cs), "kcp's main branch honours it")
		})
	}
}

// TestCertificateTemplateKeysAsKcpOperatorIgnoresThem: every kind accepts a key that names
// none of its certificates, as kcp-operator ignores it, and says so.
func TestCertificateTemplateKeysAsKcpOperatorIgnoresThem(t *testing.T) {
	const typo = `spec.certificateTemplates[sever] has no effect: "sever" names no certificate here and is ignored, as kcp-operator ignores it; the keys are `
	rs := validRootShard()
	rs.Spec.CertificateTemplates["sever"] = operator.CertificateTemplate{}
	rs.Spec.CertificateTemplates["virtual-workspaces"] = validCertificateTemplate()
	assertErrors(t, nil, ValidateRootShard(rs))
	if w := RootShardWarnings(rs); assert.Len(t, w, 2) {
		assert.Contains(t, w[0], typo+`"client", "client-ca", `)
		assert.Contains(t, w[1], `spec.certificateTemplates[virtual-workspaces] has no effect: "virtual-workspaces" templates kcp-operator's`)
	}

	s := validShard()
	s.Spec.CertificateTemplates["virtual-workspaces"] = operator.CertificateTemplate{}
	assertErrors(t, nil, ValidateShard(s))
	if w := ShardWarnings(s); assert.Len(t, w, 1) {
		assert.Contains(t, w[0], "a shard without one serves its virtual workspaces in process")
	}

	fp := validFrontProxy()
	fp.Spec.CertificateTemplates["sever"] = operator.CertificateTemplate{}
	assertErrors(t, nil, ValidateFrontProxy(fp))
	assert.Contains(t, FrontProxyWarnings(fp), typo+`"kubeconfig", "requestheader", "server"`)

	cs := validCacheServer()
	cs.Spec.CertificateTemplates["sever"] = operator.CertificateTemplate{}
	assertErrors(t, nil, ValidateCacheServer(cs))
	assert.Equal(t, []string{typo + `"ca", "client", "root-ca", "server"`}, CacheServerWarnings(cs))

	vw := validVirtualWorkspace()
	vw.Spec.CertificateTemplates["sever"] = operator.CertificateTemplate{}
	assertErrors(t, nil, ValidateVirtualWorkspace(vw))
	assert.Contains(t, VirtualWorkspaceWarnings(vw), typo+`"client", "server"`)

	assert.Empty(t, CacheServerWarnings(validCacheServer()), "known keys: no warning")
}

// TestRefusalsSayWhatToWriteInstead: a refusal that stays for this server's guarantees names
// the field to write instead.
func TestRefusalsSayWhatToWriteInstead(t *testing.T) {
	kc := validKubeconfig()
	kc.Spec.CertificateTemplate = &operator.CertificateTemplate{Spec: &operator.CertificateSpecTemplate{
		Subject:  &operator.X509Subject{Organizations: []string{"admins", "ops"}},
		Duration: &metav1.Duration{Duration: 24 * 3600 * 1e9},
	}}
	assertErrors(t, []wantErr{
		forbidden("spec.certificateTemplate.spec.subject.organizations", "write spec.groups: [admins, ops] instead"),
		forbidden("spec.certificateTemplate.spec.duration", "write spec.validity: 24h0m0s instead"),
	}, ValidateKubeconfig(kc))

	rs := validRootShard()
	rs.Spec.ExtraVolumes = append(rs.Spec.ExtraVolumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}}})
	assertErrors(t, []wantErr{forbidden("spec.extraVolumes[1].hostPath",
		"put the files in a Secret or ConfigMap, or the data on a persistentVolumeClaim, and name that instead")}, ValidateRootShard(rs))
}
