package validation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// The tests of kcp-operator's remaining fields: what is accepted with a warning, what is
// refused with a 422 and why.

func TestRootShardCacheEmbedded(t *testing.T) {
	ref := &corev1.LocalObjectReference{Name: "cache"}
	tests := []struct {
		name     string
		cache    *operator.CacheConfig
		want     []wantErr
		warnings []string
	}{
		{name: "a ref alone", cache: &operator.CacheConfig{Reference: ref}},
		{name: "no cache"},
		{
			name:     "embedded enabled without a ref",
			cache:    &operator.CacheConfig{Embedded: &operator.EmbeddedCacheConfiguration{Enabled: true}},
			warnings: []string{"spec.cache.embedded is deprecated: the root shard uses its embedded cache whenever spec.cache.ref is not set; remove spec.cache.embedded"},
		},
		{
			name:  "embedded disabled without a ref is still embedded",
			cache: &operator.CacheConfig{Embedded: &operator.EmbeddedCacheConfiguration{}},
			warnings: []string{"spec.cache.embedded.enabled: false has no effect: without spec.cache.ref the root shard still uses its embedded cache, " +
				"as in kcp-operator; to use a CacheServer, set spec.cache.ref and remove spec.cache.embedded"},
		},
		{
			name:     "embedded disabled with a ref",
			cache:    &operator.CacheConfig{Reference: ref, Embedded: &operator.EmbeddedCacheConfiguration{}},
			warnings: []string{"spec.cache.embedded is deprecated and has no effect: the root shard uses the CacheServer in spec.cache.ref and no embedded cache; remove spec.cache.embedded"},
		},
		{
			name:  "embedded enabled with a ref: the ref wins, as in kcp-operator",
			cache: &operator.CacheConfig{Reference: ref, Embedded: &operator.EmbeddedCacheConfiguration{Enabled: true}},
			warnings: []string{"spec.cache.embedded.enabled: true is ignored: the root shard uses the CacheServer of spec.cache and no embedded cache, " +
				"as kcp-operator does when both are set; remove spec.cache.embedded"},
		},
		{
			name:  "embedded enabled with a secretRef: the secretRef wins",
			cache: &operator.CacheConfig{SecretRef: ref, Embedded: &operator.EmbeddedCacheConfiguration{Enabled: true}},
			warnings: []string{"spec.cache.embedded.enabled: true is ignored: the root shard uses the CacheServer of spec.cache and no embedded cache, " +
				"as kcp-operator does when both are set; remove spec.cache.embedded"},
		},
		{name: "cache: {} as kcp-operator's Go SDK sends it means the embedded cache", cache: &operator.CacheConfig{}},
		{
			name:  "a ref and a secretRef",
			cache: &operator.CacheConfig{Reference: ref, SecretRef: ref},
			want:  []wantErr{forbidden("spec.cache.secretRef", "only one of ref, secretRef or link may be set")},
		},
		{
			name:     "embedded with a bad ref",
			cache:    &operator.CacheConfig{Reference: &corev1.LocalObjectReference{Name: "Cache"}, Embedded: &operator.EmbeddedCacheConfiguration{}},
			want:     []wantErr{invalid("spec.cache.ref.name")},
			warnings: []string{"spec.cache.embedded is deprecated and has no effect: the root shard uses the CacheServer in spec.cache.ref and no embedded cache; remove spec.cache.embedded"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := validRootShard()
			rs.Spec.Cache = tc.cache
			assertErrors(t, tc.want, ValidateRootShard(rs))
			assert.Equal(t, tc.warnings, RootShardWarnings(rs))
		})
	}
}

func TestShardCacheEmbeddedIsRefused(t *testing.T) {
	s := validShard()
	s.Spec.Cache.Embedded = &operator.EmbeddedCacheConfiguration{Enabled: true}
	assertErrors(t, []wantErr{forbidden("spec.cache.embedded", "only a RootShard has an embedded cache")}, ValidateShard(s))
}

// TestRootShardProxy: spec.proxy shapes the RootShard's internal front proxy, and is
// validated as a FrontProxy's component spec, with no warning: it is realized.
func TestRootShardProxy(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.RootShardProxySpec)
		want   []wantErr
	}{
		{name: "empty", mutate: func(*operator.RootShardProxySpec) {}},
		{
			name: "a FrontProxy's spec",
			mutate: func(p *operator.RootShardProxySpec) {
				p.ComponentSpec = validComponentSpec("requestheader")
				p.ExtraArgs = []string{"--authentication-drop-groups", "system:masters"}
			},
		},
		{
			name: "bad image, replicas, template key, args, volume and mount",
			mutate: func(p *operator.RootShardProxySpec) {
				p.ComponentSpec = validComponentSpec("client-ca")
				p.Image.Tag = "not a tag"
				p.Replicas = ptr[int32](-1)
				p.ExtraArgs = []string{"value"}
				p.ExtraVolumes = append(p.ExtraVolumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
				p.ExtraVolumeMounts = append(p.ExtraVolumeMounts, corev1.VolumeMount{Name: "extra", MountPath: "/etc/kcp-front-proxy/tls"})
				p.Logging.Level = 11
			},
			want: []wantErr{
				invalid("spec.proxy.image.tag"), invalid("spec.proxy.replicas"),
				invalid("spec.proxy.extraArgs[0]"), forbidden("spec.proxy.extraVolumes[1].hostPath"),
				invalid("spec.proxy.extraVolumeMounts[1].mountPath", "/etc/kcp-front-proxy"), invalid("spec.proxy.logging.level"),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := validRootShard()
			rs.Spec.Proxy = &operator.RootShardProxySpec{}
			tc.mutate(rs.Spec.Proxy)
			assertErrors(t, tc.want, ValidateRootShard(rs))
			assert.Empty(t, RootShardWarnings(rs), "spec.proxy is realized")
		})
	}
}

// TestKcpVirtualWorkspace: a RootShard or Shard may name the VirtualWorkspace that serves its
// virtual workspaces, by a name a VirtualWorkspace can have, and may change it on update.
func TestKcpVirtualWorkspace(t *testing.T) {
	tests := []struct {
		name string
		ref  *corev1.LocalObjectReference
		want []wantErr
	}{
		{name: "none"},
		{name: "a VirtualWorkspace", ref: &corev1.LocalObjectReference{Name: "root-vw"}},
		{name: "the longest name a VirtualWorkspace has", ref: &corev1.LocalObjectReference{Name: strings.Repeat("v", 45)}},
		{name: "no name", ref: &corev1.LocalObjectReference{}, want: []wantErr{required("spec.kcpVirtualWorkspace.name")}},
		{name: "too long for a VirtualWorkspace", ref: &corev1.LocalObjectReference{Name: strings.Repeat("v", 46)},
			want: []wantErr{invalid("spec.kcpVirtualWorkspace.name", "must be no more than 45 characters")}},
		{name: "not a DNS-1035 label", ref: &corev1.LocalObjectReference{Name: "1vw"},
			want: []wantErr{invalid("spec.kcpVirtualWorkspace.name", "a DNS-1035 label")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs, s := validRootShard(), validShard()
			rs.Spec.KcpVirtualWorkspace, s.Spec.KcpVirtualWorkspace = tc.ref, tc.ref
			assertErrors(t, tc.want, ValidateRootShard(rs))
			assertErrors(t, tc.want, ValidateShard(s))
		})
	}

	// Moving a shard to, between and from standalone servers is a rollout, not data loss.
	vw := func(name string) *corev1.LocalObjectReference { return &corev1.LocalObjectReference{Name: name} }
	for _, change := range []struct{ from, to *corev1.LocalObjectReference }{{nil, vw("a")}, {vw("a"), vw("b")}, {vw("a"), nil}} {
		old, s := validShard(), validShard()
		s.ObjectMeta, old.ObjectMeta = updatedObjectMeta("shard-1"), updatedObjectMeta("shard-1")
		old.Spec.KcpVirtualWorkspace, s.Spec.KcpVirtualWorkspace = change.from, change.to
		assertErrors(t, nil, ValidateShardUpdate(s, old))
		oldRS, rs := validRootShard(), validRootShard()
		rs.ObjectMeta, oldRS.ObjectMeta = updatedObjectMeta("root"), updatedObjectMeta("root")
		oldRS.Spec.KcpVirtualWorkspace, rs.Spec.KcpVirtualWorkspace = change.from, change.to
		assertErrors(t, nil, ValidateRootShardUpdate(rs, oldRS))
	}
}

func TestFrontProxyExternalHostname(t *testing.T) {
	const deprecated = "spec.externalHostname is deprecated: use spec.external.hostname, which it is read as"
	tests := []struct {
		name     string
		mutate   func(*operator.FrontProxySpec)
		want     []wantErr
		warnings []string
	}{
		{name: "neither", mutate: func(s *operator.FrontProxySpec) { s.External = nil }},
		{
			name:     "the deprecated field alone",
			mutate:   func(s *operator.FrontProxySpec) { s.External, s.ExternalHostname = nil, "old.example.com" },
			warnings: []string{deprecated},
		},
		{
			name:     "the deprecated field with a port",
			mutate:   func(s *operator.FrontProxySpec) { s.External.Hostname, s.ExternalHostname = "", "old.example.com" },
			warnings: []string{deprecated},
		},
		{
			name:     "both",
			mutate:   func(s *operator.FrontProxySpec) { s.ExternalHostname = "old.example.com" },
			want:     []wantErr{forbidden("spec.externalHostname", "may not be set together with spec.external.hostname")},
			warnings: []string{deprecated},
		},
		{
			name:     "not a DNS name",
			mutate:   func(s *operator.FrontProxySpec) { s.External, s.ExternalHostname = nil, "Old_Host" },
			want:     []wantErr{invalid("spec.externalHostname")},
			warnings: []string{deprecated},
		},
		{
			name:   "host:port, as kcp-operator parses it",
			mutate: func(s *operator.FrontProxySpec) { s.External, s.ExternalHostname = nil, "old.example.com:8443" },
			warnings: []string{"spec.externalHostname is deprecated: use spec.external.hostname: old.example.com and spec.external.port: 8443, " +
				"which it is read as, as in kcp-operator"},
		},
		{
			name:   "host:port with external.port, which wins as in kcp-operator",
			mutate: func(s *operator.FrontProxySpec) { s.External.Hostname, s.ExternalHostname = "", "old.example.com:8443" },
			warnings: []string{"spec.externalHostname is deprecated: use spec.external.hostname: old.example.com; its host is read as spec.external.hostname, " +
				"and its port 8443 is ignored for spec.external.port 443, as in kcp-operator"},
		},
		{
			name:   "host:port with a bad host and port",
			mutate: func(s *operator.FrontProxySpec) { s.External, s.ExternalHostname = nil, "Old_Host:0" },
			want:   []wantErr{invalid("spec.externalHostname", "a lowercase RFC 1123 subdomain"), invalid("spec.externalHostname", "port must be between 1 and 65535")},
			warnings: []string{"spec.externalHostname is deprecated: use spec.external.hostname: Old_Host and spec.external.port: 0, " +
				"which it is read as, as in kcp-operator"},
		},
		{
			name:     "a port without a host",
			mutate:   func(s *operator.FrontProxySpec) { s.External, s.ExternalHostname = nil, ":8443" },
			want:     []wantErr{invalid("spec.externalHostname", "must be a host name, or host:port")},
			warnings: []string{"spec.externalHostname is deprecated: use spec.external.hostname:  and spec.external.port: 8443, which it is read as, as in kcp-operator"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fp := validFrontProxy()
			tc.mutate(&fp.Spec)
			assertErrors(t, tc.want, ValidateFrontProxy(fp))
			assert.Equal(t, tc.warnings, FrontProxyWarnings(fp))
		})
	}
}

func TestKubeconfigAuthorization(t *testing.T) {
	const deprecated = "spec.authorization.clusterRoleBindings.cluster is deprecated: use spec.targetWorkspace"
	tests := []struct {
		name      string
		workspace string
		bindings  operator.KubeconfigClusterRoleBindings
		want      []wantErr
		warnings  []string
	}{
		{
			name:     "well formed",
			bindings: operator.KubeconfigClusterRoleBindings{ClusterRoles: []string{"cluster-admin", "system:kcp:workspace:access"}},
		},
		{
			name:     "no ClusterRoles",
			want:     []wantErr{required("spec.authorization.clusterRoleBindings.clusterRoles")},
			bindings: operator.KubeconfigClusterRoleBindings{},
		},
		{
			name:     "bad ClusterRole names",
			bindings: operator.KubeconfigClusterRoleBindings{ClusterRoles: []string{"", "a/b", "..", "view", "view", "50%"}},
			want: []wantErr{
				required("spec.authorization.clusterRoleBindings.clusterRoles[0]"),
				invalid("spec.authorization.clusterRoleBindings.clusterRoles[1]"), invalid("spec.authorization.clusterRoleBindings.clusterRoles[2]"),
				duplicate("spec.authorization.clusterRoleBindings.clusterRoles[4]"), invalid("spec.authorization.clusterRoleBindings.clusterRoles[5]"),
			},
		},
		{
			name:      "the deprecated cluster with the default workspace",
			workspace: "root",
			bindings:  operator.KubeconfigClusterRoleBindings{Cluster: "root:team-a", ClusterRoles: []string{"view"}},
			warnings:  []string{deprecated},
		},
		{
			name:      "the deprecated cluster with a workspace of its own",
			workspace: "root:team-b",
			bindings:  operator.KubeconfigClusterRoleBindings{Cluster: "root:team-a", ClusterRoles: []string{"view"}},
			want: []wantErr{
				forbidden("spec.authorization.clusterRoleBindings.cluster", "may not be set together with spec.targetWorkspace: use spec.targetWorkspace only"),
			},
			warnings: []string{deprecated},
		},
		{
			name:      "a bad cluster",
			workspace: "root",
			bindings:  operator.KubeconfigClusterRoleBindings{Cluster: "Root", ClusterRoles: []string{"view"}},
			want:      []wantErr{invalid("spec.authorization.clusterRoleBindings.cluster")},
			warnings:  []string{deprecated},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kc := validKubeconfig()
			if tc.workspace != "" {
				kc.Spec.TargetWorkspace = tc.workspace
			}
			kc.Spec.Authorization = &operator.KubeconfigAuthorization{ClusterRoleBindings: tc.bindings}
			assertErrors(t, tc.want, ValidateKubeconfig(kc))
			assert.Equal(t, tc.warnings, KubeconfigWarnings(kc))
		})
	}
	assert.Empty(t, KubeconfigWarnings(validKubeconfig()))
}
