package rootshard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// workloadsRootShard sets every field the workloads realize.
func workloadsRootShard() *operatorv1alpha1.RootShard {
	rs := loadedRootShard()
	rs.Spec.Replicas = ptr.To[int32](3)
	rs.Spec.Image = &operatorv1alpha1.ImageSpec{Repository: "registry.example.com/kcp", Tag: "v9.9.9",
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}}
	rs.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	rs.Spec.Etcd = operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd-0:2379", "https://etcd-1:2379"}, Prefix: "/kcp",
		TLSConfig: &operatorv1alpha1.EtcdTLSConfig{SecretRef: corev1.LocalObjectReference{Name: "etcd-client"}}}
	rs.Spec.Cache = &operatorv1alpha1.CacheConfig{Reference: &corev1.LocalObjectReference{Name: "cache"}}
	rs.Spec.Auth = &operatorv1alpha1.AuthSpec{OIDC: &operatorv1alpha1.OIDCConfiguration{IssuerURL: "https://dex.example.com", ClientID: "kcp",
		GroupsClaim: "groups", UsernameClaim: "email", GroupsPrefix: "oidc:", UsernamePrefix: "oidc:",
		CAFileRef: &operatorv1alpha1.LocalDataKeyReference{Name: "dex-ca", Key: "ca.crt"}},
		ServiceAccount: &operatorv1alpha1.ServiceAccountAuthentication{Enabled: true},
		Webhook:        &operatorv1alpha1.AuthWebhookSpec{ConfigSecretName: "authn-hook", CacheAuthenticationTTL: &metav1.Duration{Duration: 2 * time.Minute}},
		TokenAuthFile:  &operatorv1alpha1.TokenAuthFileSpec{SecretName: "tokens", Key: "token.csv"}}
	minute := metav1.Duration{Duration: time.Minute}
	rs.Spec.Audit = &operatorv1alpha1.AuditSpec{
		Policy:  &operatorv1alpha1.AuditPolicySpec{ConfigMap: &operatorv1alpha1.LocalDataKeyReference{Name: "audit", Key: "policy.yaml"}},
		Webhook: &operatorv1alpha1.AuditWebhookSpec{ConfigSecretName: "audit-hook", Mode: "batch", BatchMaxWait: &minute, BatchThrottleQPS: "10"},
	}
	rs.Spec.Authorization = &operatorv1alpha1.AuthorizationSpec{Webhook: &operatorv1alpha1.AuthorizationWebhookSpec{
		ConfigSecretName: "authz-hook", AllowPaths: []string{"/healthz", "/livez"}, CacheAuthorizedTTL: &minute, Version: "v1"}}
	rs.Spec.ExtraArgs = []string{"--feature-gates=X=true"}
	rs.Spec.ExtraVolumes = []corev1.Volume{{Name: "extra", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "extra"}}}}}
	rs.Spec.ExtraVolumeMounts = []corev1.VolumeMount{{Name: "extra", MountPath: "/var/extra"}}
	rs.Spec.Logging = &operatorv1alpha1.LoggingSpec{Level: 4}
	rs.Spec.DeploymentTemplate = &operatorv1alpha1.DeploymentTemplate{
		Metadata: &operatorv1alpha1.MetadataTemplate{Labels: map[string]string{"team": "a"}},
		Spec: &operatorv1alpha1.DeploymentSpecTemplate{Template: &operatorv1alpha1.PodTemplateSpec{
			Metadata: &operatorv1alpha1.MetadataTemplate{Annotations: map[string]string{"prometheus.io/scrape": "true"}},
			Spec: &operatorv1alpha1.PodSpecTemplate{
				NodeSelector: map[string]string{"pool": "kcp"},
				Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "kcp", Effect: corev1.TaintEffectNoSchedule}},
				HostAliases:  []corev1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"etcd-0"}}},
			},
		}},
	}
	rs.Spec.ServiceTemplate = &operatorv1alpha1.ServiceTemplate{Spec: &operatorv1alpha1.ServiceSpecTemplate{Type: corev1.ServiceTypeLoadBalancer}}
	return rs
}

func TestWorkloads(t *testing.T) {
	for name, rs := range map[string]*operatorv1alpha1.RootShard{"workloads-minimal": minimalRootShard(), "workloads-loaded": workloadsRootShard()} {
		t.Run(name, func(t *testing.T) {
			admin, err := Server(rs).AdminKubeconfig(kcp.LogicalClusterAdmin)
			require.NoError(t, err)
			external, err := Server(rs).AdminKubeconfig(kcp.ExternalLogicalClusterAdmin)
			require.NoError(t, err)
			bundles := CABundles{ServerCA: []byte("SERVER-CA\n"), ClientCA: []byte("CLIENT-CA"), FrontProxyClientCA: []byte("FRONT-PROXY-CLIENT-CA"), ExtraClientCAs: []byte("EXTRA")}
			k := Server(rs)
			// The shards of the RootShard, as the controller hands them.
			k.ServiceAccountIssuers = []string{"shard-b", "root", "shard-a"}
			golden.Assert(t, name, k.Deployment(nil, "hash"), Server(rs).Service(), admin, external, MergedClientCA(rs, bundles), MergedCABundle(rs, bundles))
		})
	}
}

func TestDeploymentReplicas(t *testing.T) {
	rs := minimalRootShard()
	assert.EqualValues(t, 2, *Server(rs).Deployment(nil, "h").Spec.Replicas, "a new Deployment starts with 2")
	scaled := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](5)}}
	assert.EqualValues(t, 5, *Server(rs).Deployment(scaled, "h").Spec.Replicas, "an unset spec keeps what an HPA chose")
	rs.Spec.Replicas = ptr.To[int32](3)
	assert.EqualValues(t, 3, *Server(rs).Deployment(scaled, "h").Spec.Replicas, "a set spec wins")
}

func TestDeploymentRollsWithSecrets(t *testing.T) {
	rs := minimalRootShard()
	a := Server(rs).Deployment(nil, "a").Spec.Template.Annotations
	b := Server(rs).Deployment(nil, "b").Spec.Template.Annotations
	assert.NotEqual(t, a, b)
}

func TestAdminKubeconfigParses(t *testing.T) {
	s, err := Server(minimalRootShard()).AdminKubeconfig(kcp.LogicalClusterAdmin)
	require.NoError(t, err)
	cfg, err := clientcmd.Load(s.Data[kcp.KubeconfigKey])
	require.NoError(t, err)
	assert.Equal(t, kcp.ShardBaseContext, cfg.CurrentContext)
	assert.Equal(t, "https://root-kcp.team-a.svc.cluster.local:6443", cfg.Clusters[kcp.ShardBaseContext].Server)
	assert.Equal(t, "/etc/kcp/tls/logical-cluster-admin/tls.key", cfg.AuthInfos[kcp.LogicalClusterAdmin].ClientKey)
}

// TestVersionGoldens renders the root shard's Deployment at each kcp minor kcp-setups
// supports, so that a review sees the version gates (the mount proxy from v0.31.6, v0.32.3).
func TestVersionGoldens(t *testing.T) {
	for minor, tag := range map[string]string{"v0.30": "v0.30.0", "v0.31": "v0.31.6", "v0.32": "v0.32.3"} {
		t.Run(minor, func(t *testing.T) {
			rs := minimalRootShard()
			rs.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: tag}
			golden.Assert(t, "workloads-minimal-"+minor, Server(rs).Deployment(nil, "hash"))
		})
	}
}

// TestVirtualWorkspaceGolden renders a root shard whose virtual workspaces a VirtualWorkspace
// serves, as the controller describes it: kcp runs none itself, announces the server's URL
// and verifies it with the server CA.
func TestVirtualWorkspaceGolden(t *testing.T) {
	rs := minimalRootShard()
	rs.Spec.KcpVirtualWorkspace = &corev1.LocalObjectReference{Name: "vw"}
	k := Server(rs)
	k.VirtualWorkspace = &kcp.VirtualWorkspaceEndpoint{URL: "https://vw.example.com:6443"}
	args := k.Args()
	assert.Contains(t, args, "--run-virtual-workspaces=false")
	assert.Contains(t, args, "--shard-virtual-workspace-url=https://vw.example.com:6443")
	assert.Contains(t, args, "--shard-virtual-workspace-ca-file=/etc/kcp/tls/ca/server/tls.crt")
	// kcp calls the server with its client certificate (pkg/server/controllers.go@v0.32.3).
	assert.Contains(t, args, "--shard-client-cert-file=/etc/kcp/tls/client/tls.crt")
	assert.Contains(t, args, "--shard-client-key-file=/etc/kcp/tls/client/tls.key")
	assert.NotContains(t, Server(rs).Args(), "--run-virtual-workspaces=false", "without the controller's endpoint, kcp serves them")
	golden.Assert(t, "workloads-virtual-workspace", k.Deployment(nil, "hash"))
}
