package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// TestValidateCommonShardSpec checks that every common piece is validated at its own path.
func TestValidateCommonShardSpec(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*operator.CommonShardSpec)
		want   []wantErr
	}{
		{name: "valid", mutate: func(*operator.CommonShardSpec) {}},
		{
			name:   "cluster domain not defaulted",
			mutate: func(s *operator.CommonShardSpec) { s.ClusterDomain = "" },
			want:   []wantErr{required("spec.clusterDomain")},
		},
		{
			name:   "cluster domain not a DNS-1123 subdomain",
			mutate: func(s *operator.CommonShardSpec) { s.ClusterDomain = "cluster.local." },
			want:   []wantErr{invalid("spec.clusterDomain")},
		},
		{
			name:   "no shard base URL",
			mutate: func(s *operator.CommonShardSpec) { s.ShardBaseURL = "" },
		},
		{
			name:   "shard base URL not https",
			mutate: func(s *operator.CommonShardSpec) { s.ShardBaseURL = "http://shard.example.com" },
			want:   []wantErr{invalid("spec.shardBaseURL")},
		},
		{
			name:   "etcd",
			mutate: func(s *operator.CommonShardSpec) { s.Etcd.Endpoints = []string{"etcd:0"} },
			want:   []wantErr{invalid("spec.etcd.endpoints[0]", "port must be between 1 and 65535")},
		},
		{
			name:   "image",
			mutate: func(s *operator.CommonShardSpec) { s.Image.Tag = "-" },
			want:   []wantErr{invalid("spec.image.tag")},
		},
		{
			name:   "zero replicas",
			mutate: func(s *operator.CommonShardSpec) { s.Replicas = ptr[int32](0) },
		},
		{
			name:   "negative replicas",
			mutate: func(s *operator.CommonShardSpec) { s.Replicas = ptr[int32](-1) },
			want:   []wantErr{invalid("spec.replicas", "must be greater than or equal to 0")},
		},
		{
			name:   "resources",
			mutate: func(s *operator.CommonShardSpec) { s.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2") },
			want:   []wantErr{invalid("spec.resources.requests[cpu]")},
		},
		{
			name:   "audit",
			mutate: func(s *operator.CommonShardSpec) { s.Audit.Webhook.Mode = "sync" },
			want:   []wantErr{notSupported("spec.audit.webhook.mode")},
		},
		{
			name:   "authorization",
			mutate: func(s *operator.CommonShardSpec) { s.Authorization.Webhook.Version = "v2" },
			want:   []wantErr{notSupported("spec.authorization.webhook.version")},
		},
		{
			name:   "auth",
			mutate: func(s *operator.CommonShardSpec) { s.Auth.OIDC.ClientID = "" },
			want:   []wantErr{required("spec.auth.oidc.clientID")},
		},
		{
			name:   "certificate templates",
			mutate: func(s *operator.CommonShardSpec) { s.CertificateTemplates["server"].Spec.PrivateKey.KeySize = 256 },
			want:   []wantErr{invalid("spec.certificateTemplates[server].spec.privateKey.size")},
		},
		{
			name:   "service template",
			mutate: func(s *operator.CommonShardSpec) { s.ServiceTemplate.Spec.Type = corev1.ServiceTypeExternalName },
			want:   []wantErr{notSupported("spec.serviceTemplate.spec.type")},
		},
		{
			name: "deployment template",
			mutate: func(s *operator.CommonShardSpec) {
				s.DeploymentTemplate.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "a", Operator: "Maybe"}}
			},
			want: []wantErr{notSupported("spec.deploymentTemplate.spec.template.spec.tolerations[0].operator")},
		},
		{
			name:   "CA bundle secret without a name",
			mutate: func(s *operator.CommonShardSpec) { s.CABundleSecretRef.Name = "" },
			want:   []wantErr{required("spec.caBundleSecretRef.name")},
		},
		{
			name:   "client CA bundle not a DNS-1123 subdomain",
			mutate: func(s *operator.CommonShardSpec) { s.ClientCABundleRef.Name = "Client CA" },
			want:   []wantErr{invalid("spec.clientCABundleRef.name")},
		},
		{
			name:   "extra args",
			mutate: func(s *operator.CommonShardSpec) { s.ExtraArgs = append(s.ExtraArgs, "v=4") },
			want:   []wantErr{invalid("spec.extraArgs[1]")},
		},
		{
			name: "extra volumes",
			mutate: func(s *operator.CommonShardSpec) {
				s.ExtraVolumes = append(s.ExtraVolumes, corev1.Volume{Name: "extra"})
			},
			want: []wantErr{duplicate("spec.extraVolumes[1].name")},
		},
		{
			name:   "extra volume mounts",
			mutate: func(s *operator.CommonShardSpec) { s.ExtraVolumeMounts[0].MountPath = "/etc/kcp/tls" },
			want:   []wantErr{invalid("spec.extraVolumeMounts[0].mountPath")},
		},
		{
			name:   "logging level 0",
			mutate: func(s *operator.CommonShardSpec) { s.Logging.Level = 0 },
		},
		{
			name:   "logging level too high",
			mutate: func(s *operator.CommonShardSpec) { s.Logging.Level = 11 },
			want:   []wantErr{invalid("spec.logging.level", "must be between 0 and 10, inclusive")},
		},
		{
			name:   "negative logging level",
			mutate: func(s *operator.CommonShardSpec) { s.Logging.Level = -1 },
			want:   []wantErr{invalid("spec.logging.level")},
		},
		{
			// kcp-operator's shared AuthSpec: service accounts are realized on shards; the groups
			// are accepted with a warning (they only act on a front proxy).
			name: "kcp-operator's shared authentication settings",
			mutate: func(s *operator.CommonShardSpec) {
				s.Auth.ServiceAccount = &operator.ServiceAccountAuthentication{Enabled: true}
				s.Auth.DropGroups = []string{"system:masters"}
				s.Auth.PassOnGroups = []string{"team-a"}
				s.Auth.Webhook = &operator.AuthWebhookSpec{ConfigSecretName: "authn-hook", Version: "v1"}
				s.Auth.TokenAuthFile = &operator.TokenAuthFileSpec{SecretName: "tokens", Key: "token.csv"}
			},
		},
		{
			name: "invalid groups are still refused on a shard",
			mutate: func(s *operator.CommonShardSpec) {
				s.Auth.DropGroups = []string{"a,b"}
			},
			want: []wantErr{invalid("spec.auth.dropGroups[0]", "may not contain a comma")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := validCommonShardSpec()
			tc.mutate(&spec)
			assertErrors(t, tc.want, validateCommonShardSpec(&spec, rootShardTemplates, field.NewPath("spec")))
		})
	}
}
