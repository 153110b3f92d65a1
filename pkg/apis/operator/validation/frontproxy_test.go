package validation

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func validFrontProxy() *operator.FrontProxy {
	common := validCommonShardSpec()
	component := validComponentSpec("server")
	component.CertificateTemplates["requestheader"] = operator.CertificateTemplate{}
	component.ServiceTemplate = &operator.ServiceTemplate{Spec: &operator.ServiceSpecTemplate{Type: corev1.ServiceTypeLoadBalancer}}
	return &operator.FrontProxy{
		ObjectMeta: validObjectMeta("edge"),
		Spec: operator.FrontProxySpec{
			ComponentSpec: component,
			RootShard:     operator.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}},
			External:      &operator.FrontProxyExternalConfig{Hostname: "edge.example.com", Port: 443},
			Auth:          &operator.AuthSpec{OIDC: common.Auth.OIDC, DropGroups: []string{"system:masters"}},
			AdditionalPathMappings: []operator.PathMappingEntry{{
				Path: "/services/foo", Backend: "https://foo.team-a.svc:6443/services/foo",
				BackendServerCA: "/var/extra/ca.crt", ProxyClientCert: "/var/extra/tls.crt", ProxyClientKey: "/var/extra/tls.key",
			}},
			CABundleSecretRef: common.CABundleSecretRef,
			ClientCABundleRef: common.ClientCABundleRef,
		},
	}
}

func TestValidateFrontProxy(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.FrontProxy)
		want   []wantErr
	}{
		{name: "valid", mutate: func(*operator.FrontProxy) {}},
		{
			name: "minimal",
			mutate: func(fp *operator.FrontProxy) {
				fp.Spec = operator.FrontProxySpec{RootShard: fp.Spec.RootShard}
			},
		},
		{
			name: "service account authentication, webhook and token file",
			mutate: func(fp *operator.FrontProxy) {
				fp.Spec.Auth.ServiceAccount = &operator.ServiceAccountAuthentication{Enabled: true}
				fp.Spec.Auth.Webhook = &operator.AuthWebhookSpec{ConfigSecretName: "authn-hook"}
				fp.Spec.Auth.TokenAuthFile = &operator.TokenAuthFileSpec{SecretName: "tokens"}
			},
		},
		{
			name: "invalid token webhook",
			mutate: func(fp *operator.FrontProxy) {
				fp.Spec.Auth.Webhook = &operator.AuthWebhookSpec{Version: "v2"}
			},
			want: []wantErr{required("spec.auth.webhook.configSecretName"), notSupported("spec.auth.webhook.version")},
		},
		{
			name:   "name at the maximum length",
			mutate: func(fp *operator.FrontProxy) { fp.Name = strings.Repeat("f", 51) },
		},
		{
			name:   "name too long for the Service name",
			mutate: func(fp *operator.FrontProxy) { fp.Name = strings.Repeat("f", 52) },
			want:   []wantErr{invalid("metadata.name", "must be no more than 51 characters, so that the Service <name>-front-proxy is a valid name")},
		},
		{
			name:   "rootShard without ref",
			mutate: func(fp *operator.FrontProxy) { fp.Spec.RootShard.Reference = nil },
			want:   []wantErr{required("spec.rootShard", "one of ref, secretRef or link is required")},
		},
		{
			name: "rootShard by a copy of its join Secret",
			mutate: func(fp *operator.FrontProxy) {
				fp.Spec.RootShard = operator.RootShardConfig{SecretRef: ref("root-front-proxy-join")}
			},
		},
		{
			name:   "rootShard by ref and secretRef",
			mutate: func(fp *operator.FrontProxy) { fp.Spec.RootShard.SecretRef = ref("root-front-proxy-join") },
			want:   []wantErr{forbidden("spec.rootShard.secretRef", "only one of ref, secretRef or link may be set")},
		},
		{
			name: "rootShard by a link",
			mutate: func(fp *operator.FrontProxy) {
				fp.Spec.RootShard = operator.RootShardConfig{Link: link("eu-1-link-bootstrap")}
			},
		},
		{
			name:   "rootShard by ref and link",
			mutate: func(fp *operator.FrontProxy) { fp.Spec.RootShard.Link = link("eu-1-link-bootstrap") },
			want:   []wantErr{forbidden("spec.rootShard.link", "only one of ref, secretRef or link may be set")},
		},
		{
			name: "rootShard link without a Secret name",
			mutate: func(fp *operator.FrontProxy) {
				fp.Spec.RootShard = operator.RootShardConfig{Link: &operator.RootShardLink{}}
			},
			want: []wantErr{required("spec.rootShard.link.secretRef.name")},
		},
		{
			name:   "negative replicas",
			mutate: func(fp *operator.FrontProxy) { fp.Spec.Replicas = ptr[int32](-1) },
			want:   []wantErr{invalid("spec.replicas")},
		},
		{
			name:   "external port 0 inherits the RootShard's",
			mutate: func(fp *operator.FrontProxy) { fp.Spec.External = &operator.FrontProxyExternalConfig{} },
		},
		{
			name:   "external port out of range",
			mutate: func(fp *operator.FrontProxy) { fp.Spec.External.Port = 70000 },
			want:   []wantErr{invalid("spec.external.port", "must be between 1 and 65535, inclusive")},
		},
		{
			name:   "external hostname not a DNS name",
			mutate: func(fp *operator.FrontProxy) { fp.Spec.External.Hostname = "edge_proxy" },
			want:   []wantErr{invalid("spec.external.hostname")},
		},
		{
			name: "certificate template for a role a FrontProxy does not have: ignored, and still checked",
			mutate: func(fp *operator.FrontProxy) {
				fp.Spec.CertificateTemplates["client"] = operator.CertificateTemplate{Spec: &operator.CertificateSpecTemplate{DNSNames: []string{"Not A Name"}}}
			},
			want: []wantErr{invalid("spec.certificateTemplates[client].spec.dnsNames[0]")},
		},
		{
			name: "OIDC without a client ID",
			mutate: func(fp *operator.FrontProxy) {
				fp.Spec.Auth = &operator.AuthSpec{OIDC: &operator.OIDCConfiguration{IssuerURL: "https://dex"}}
			},
			want: []wantErr{required("spec.auth.oidc.clientID")},
		},
		{
			name:   "extra volume mount of an unknown volume",
			mutate: func(fp *operator.FrontProxy) { fp.Spec.ExtraVolumeMounts[0].Name = "other" },
			want:   []wantErr{notFound("spec.extraVolumeMounts[0].name")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fp := validFrontProxy()
			tc.mutate(fp)
			assertErrors(t, tc.want, ValidateFrontProxy(fp))
		})
	}
}

func TestValidatePathMappings(t *testing.T) {
	valid := func() operator.PathMappingEntry {
		return operator.PathMappingEntry{Path: "/services/a", Backend: "https://a:6443"}
	}
	// to is one valid mapping to each backend.
	to := func(backends ...string) []operator.PathMappingEntry {
		var ms []operator.PathMappingEntry
		for i, b := range backends {
			m := valid()
			m.Path, m.Backend = fmt.Sprintf("/services/%d", i), b
			ms = append(ms, m)
		}
		return ms
	}
	tests := []struct {
		name     string
		mappings func() []operator.PathMappingEntry
		want     []wantErr
	}{
		{name: "valid", mappings: func() []operator.PathMappingEntry { return []operator.PathMappingEntry{valid()} }},
		{
			name: "path missing",
			mappings: func() []operator.PathMappingEntry {
				m := valid()
				m.Path = ""
				return []operator.PathMappingEntry{m}
			},
			want: []wantErr{required("spec.additionalPathMappings[0].path")},
		},
		{
			name: "relative path",
			mappings: func() []operator.PathMappingEntry {
				m := valid()
				m.Path = "services/a"
				return []operator.PathMappingEntry{m}
			},
			want: []wantErr{invalid("spec.additionalPathMappings[0].path")},
		},
		{
			name:     "duplicate path",
			mappings: func() []operator.PathMappingEntry { return []operator.PathMappingEntry{valid(), valid()} },
			want:     []wantErr{duplicate("spec.additionalPathMappings[1].path")},
		},
		{
			name: "backend missing",
			mappings: func() []operator.PathMappingEntry {
				m := valid()
				m.Backend = ""
				return []operator.PathMappingEntry{m}
			},
			want: []wantErr{required("spec.additionalPathMappings[0].backend")},
		},
		{
			name: "plain http backend",
			mappings: func() []operator.PathMappingEntry {
				m := valid()
				m.Backend = "http://a.svc"
				return []operator.PathMappingEntry{m}
			},
			want: []wantErr{invalid("spec.additionalPathMappings[0].backend", `must be a URL with the scheme "https"`)},
		},
		{
			name: "relative file paths",
			mappings: func() []operator.PathMappingEntry {
				m := valid()
				m.BackendServerCA, m.ProxyClientCert, m.ProxyClientKey = "ca.crt", "tls.crt", "tls.key"
				return []operator.PathMappingEntry{m}
			},
			want: []wantErr{
				invalid("spec.additionalPathMappings[0].backend_server_ca"),
				invalid("spec.additionalPathMappings[0].proxy_client_cert"),
				invalid("spec.additionalPathMappings[0].proxy_client_key"),
			},
		},
		{
			name: "backends in the namespace",
			mappings: func() []operator.PathMappingEntry {
				return to("https://a", "https://a.team-a", "https://a.team-a.svc:6443", "https://a.team-a.svc.cluster.local/x")
			},
		},
		{
			name: "backends elsewhere: another namespace, an IP, a host outside the cluster",
			mappings: func() []operator.PathMappingEntry {
				return to("https://root-kcp.team-b.svc:6443", "https://a.team-b", "https://10.0.0.1:6443", "https://kcp.example.com", "https://a.team-a.cluster.local")
			},
			want: []wantErr{
				forbidden("spec.additionalPathMappings[0].backend", `must be a Service of the FrontProxy's namespace "team-a"`),
				forbidden("spec.additionalPathMappings[1].backend"),
				forbidden("spec.additionalPathMappings[2].backend"),
				forbidden("spec.additionalPathMappings[3].backend"),
				forbidden("spec.additionalPathMappings[4].backend"),
			},
		},
		{
			name: "the proxy's own identity and CA",
			mappings: func() []operator.PathMappingEntry {
				m := valid()
				m.Backend = "https://root-kcp:6443"
				m.BackendServerCA = "/etc/kcp-front-proxy/tls/ca/tls.crt"
				m.ProxyClientCert = "/etc/kcp-front-proxy/kubeconfig-client/tls.crt"
				m.ProxyClientKey = "/etc/kcp-front-proxy/kubeconfig-client/tls.key"
				return []operator.PathMappingEntry{m}
			},
			want: []wantErr{
				forbidden("spec.additionalPathMappings[0].backend_server_ca", "must be a file in a volume of spec.extraVolumes"),
				forbidden("spec.additionalPathMappings[0].proxy_client_cert"),
				forbidden("spec.additionalPathMappings[0].proxy_client_key"),
			},
		},
		{
			name: "out of the author's mount by '..', and the mount itself",
			mappings: func() []operator.PathMappingEntry {
				m := valid()
				m.ProxyClientCert = "/var/extra/../../etc/kcp-front-proxy/kubeconfig-client/tls.crt"
				m.ProxyClientKey = "/var/extra"
				return []operator.PathMappingEntry{m}
			},
			want: []wantErr{
				invalid("spec.additionalPathMappings[0].proxy_client_cert", "must be a clean path"),
				forbidden("spec.additionalPathMappings[0].proxy_client_key"),
			},
		},
		{
			name: "a VirtualWorkspace, as kcp-operator's sample routes /services/access",
			mappings: func() []operator.PathMappingEntry {
				return []operator.PathMappingEntry{{Path: "/services/access", VirtualWorkspaceRef: &corev1.LocalObjectReference{Name: "access"}}}
			},
		},
		{
			name: "a VirtualWorkspace with a backend and the proxy's files",
			mappings: func() []operator.PathMappingEntry {
				return []operator.PathMappingEntry{{
					Path: "/services/access", VirtualWorkspaceRef: &corev1.LocalObjectReference{Name: "access"},
					Backend:         "https://access-virtual-workspace.team-a.svc.cluster.local:6443",
					BackendServerCA: "/etc/kcp-front-proxy/tls/ca/tls.crt",
					ProxyClientCert: "/etc/kcp-front-proxy/requestheader-client/tls.crt",
					ProxyClientKey:  "/etc/kcp-front-proxy/requestheader-client/tls.key",
				}}
			},
			want: []wantErr{
				forbidden("spec.additionalPathMappings[0].backend", "must be empty with virtualWorkspaceRef: the server routes the path to the VirtualWorkspace's Service"),
				forbidden("spec.additionalPathMappings[0].backend_server_ca", "must be empty with virtualWorkspaceRef"),
				forbidden("spec.additionalPathMappings[0].proxy_client_cert", "must be empty with virtualWorkspaceRef"),
				forbidden("spec.additionalPathMappings[0].proxy_client_key", "must be empty with virtualWorkspaceRef"),
			},
		},
		{
			name: "a VirtualWorkspace with an author's file: the identity is the proxy's alone",
			mappings: func() []operator.PathMappingEntry {
				return []operator.PathMappingEntry{{Path: "/services/access", VirtualWorkspaceRef: &corev1.LocalObjectReference{Name: "access"},
					ProxyClientCert: "/var/extra/tls.crt"}}
			},
			want: []wantErr{forbidden("spec.additionalPathMappings[0].proxy_client_cert", "must be empty with virtualWorkspaceRef")},
		},
		{
			name: "a VirtualWorkspace without a name, and with a name no VirtualWorkspace can have",
			mappings: func() []operator.PathMappingEntry {
				return []operator.PathMappingEntry{
					{Path: "/services/a", VirtualWorkspaceRef: &corev1.LocalObjectReference{}},
					{Path: "/services/b", VirtualWorkspaceRef: &corev1.LocalObjectReference{Name: "Access"}},
				}
			},
			want: []wantErr{
				required("spec.additionalPathMappings[0].virtualWorkspaceRef.name"),
				invalid("spec.additionalPathMappings[1].virtualWorkspaceRef.name"),
			},
		},
		{
			name: "files in the author's mount",
			mappings: func() []operator.PathMappingEntry {
				m := valid()
				m.BackendServerCA, m.ProxyClientCert, m.ProxyClientKey = "/var/extra/ca.crt", "/var/extra/tls.crt", "/var/extra/sub/tls.key"
				return []operator.PathMappingEntry{m}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fp := validFrontProxy()
			fp.Spec.AdditionalPathMappings = tc.mappings()
			assertErrors(t, tc.want, ValidateFrontProxy(fp))
		})
	}
}

func TestValidateFrontProxyUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.FrontProxy)
		want   []wantErr
	}{
		{name: "unchanged", mutate: func(*operator.FrontProxy) {}},
		{
			name:   "mutable field changed",
			mutate: func(fp *operator.FrontProxy) { fp.Spec.External.Hostname = "edge2.example.com" },
		},
		{
			name:   "rootShard changed",
			mutate: func(fp *operator.FrontProxy) { fp.Spec.RootShard.Reference.Name = "other-root" },
			want:   []wantErr{invalid("spec.rootShard.ref.name", "field is immutable")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldObj, newObj := validFrontProxy(), validFrontProxy()
			oldObj.ObjectMeta, newObj.ObjectMeta = updatedObjectMeta("edge"), updatedObjectMeta("edge")
			tc.mutate(newObj)
			assertErrors(t, tc.want, ValidateFrontProxyUpdate(newObj, oldObj))
		})
	}
}

func TestValidateFrontProxyStatusUpdate(t *testing.T) {
	tests := []struct {
		name   string
		status operator.FrontProxyStatus
		want   []wantErr
	}{
		{name: "valid", status: operator.FrontProxyStatus{Phase: operator.PhaseDeleting}},
		{name: "unknown phase", status: operator.FrontProxyStatus{Phase: "Failed"}, want: []wantErr{notSupported("status.phase")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldObj, newObj := validFrontProxy(), validFrontProxy()
			oldObj.ObjectMeta, newObj.ObjectMeta = updatedObjectMeta("edge"), updatedObjectMeta("edge")
			newObj.Status = tc.status
			assertErrors(t, tc.want, ValidateFrontProxyStatusUpdate(newObj, oldObj))
		})
	}
}

func TestValidateFrontProxyNil(t *testing.T) {
	assert.NotEmpty(t, ValidateFrontProxy(nil))
	assert.NotEmpty(t, ValidateFrontProxyUpdate(nil, nil))
	assert.NotEmpty(t, ValidateFrontProxyStatusUpdate(nil, validFrontProxy()))
}

// TestValidateFrontProxyWiring checks that every shared piece of a FrontProxy is validated at
// its own path.
func TestValidateFrontProxyWiring(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.FrontProxySpec)
		want   []wantErr
	}{
		{
			name: "resources",
			mutate: func(s *operator.FrontProxySpec) {
				s.Resources.Limits = corev1.ResourceList{"cpu": resourceQuantity("-1")}
			},
			want: []wantErr{invalid("spec.resources.limits[cpu]")},
		},
		{
			name:   "image",
			mutate: func(s *operator.FrontProxySpec) { s.Image.Repository = "a b" },
			want:   []wantErr{invalid("spec.image.repository")},
		},
		{
			name:   "service template",
			mutate: func(s *operator.FrontProxySpec) { s.ServiceTemplate.Spec.ClusterIP = "x" },
			want:   []wantErr{invalid("spec.serviceTemplate.spec.clusterIP")},
		},
		{
			name: "deployment template",
			mutate: func(s *operator.FrontProxySpec) {
				s.DeploymentTemplate.Metadata = &operator.MetadataTemplate{Labels: map[string]string{"a": "b c"}}
			},
			want: []wantErr{invalid("spec.deploymentTemplate.metadata.labels")},
		},
		{
			name:   "CA bundle refs",
			mutate: func(s *operator.FrontProxySpec) { s.CABundleSecretRef.Name, s.ClientCABundleRef.Name = "", "" },
			want:   []wantErr{required("spec.caBundleSecretRef.name"), required("spec.clientCABundleRef.name")},
		},
		{
			name:   "extras",
			mutate: func(s *operator.FrontProxySpec) { s.ExtraArgs, s.ExtraVolumes[0].Name = []string{"x"}, "Extra" },
			want:   []wantErr{invalid("spec.extraArgs[0]"), invalid("spec.extraVolumes[0].name"), notFound("spec.extraVolumeMounts[0].name")},
		},
		{
			name:   "logging",
			mutate: func(s *operator.FrontProxySpec) { s.Logging.Level = 42 },
			want:   []wantErr{invalid("spec.logging.level")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fp := validFrontProxy()
			tc.mutate(&fp.Spec)
			assertErrors(t, tc.want, ValidateFrontProxy(fp))
		})
	}
}
