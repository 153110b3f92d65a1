package frontproxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
)

func rootShard() *operatorv1alpha1.RootShard {
	return &operatorv1alpha1.RootShard{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{ClusterDomain: "cluster.local"},
			External:        operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 443},
		},
	}
}

func minimal() FrontProxy {
	return FrontProxy{RootShard: rootShard(), FrontProxy: &operatorv1alpha1.FrontProxy{
		ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "team-a"},
		Spec:       operatorv1alpha1.FrontProxySpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}},
	}}
}

func loaded() FrontProxy {
	f := minimal()
	f.Spec.External = &operatorv1alpha1.FrontProxyExternalConfig{Hostname: "edge.example.com", Port: 8443}
	f.Spec.Replicas = ptr.To[int32](3)
	f.Spec.Auth = &operatorv1alpha1.AuthSpec{DropGroups: []string{"system:masters", "system:kcp:admin"}, PassOnGroups: []string{"team-a"},
		OIDC: &operatorv1alpha1.OIDCConfiguration{IssuerURL: "https://dex.example.com", ClientID: "kcp",
			CAFileRef: &operatorv1alpha1.LocalDataKeyReference{Name: "dex-ca", Key: "ca.crt"}}}
	f.Spec.AdditionalPathMappings = []operatorv1alpha1.PathMappingEntry{{Path: "/services/extra/", Backend: "https://extra.team-a.svc:6443",
		BackendServerCA: "/etc/extra/ca.crt"}}
	f.Spec.ExtraArgs = []string{"--v=4"}
	f.Spec.CertificateTemplates = operatorv1alpha1.CertificateTemplateMap{"server": {Spec: &operatorv1alpha1.CertificateSpecTemplate{DNSNames: []string{"edge.internal"}}}}
	f.Spec.ServiceTemplate = &operatorv1alpha1.ServiceTemplate{Spec: &operatorv1alpha1.ServiceSpecTemplate{Type: corev1.ServiceTypeLoadBalancer}}
	return f
}

func TestBuilders(t *testing.T) {
	for name, f := range map[string]FrontProxy{"minimal": minimal(), "loaded": loaded()} {
		t.Run(name, func(t *testing.T) {
			kubeconfig, err := f.DynamicKubeconfig()
			require.NoError(t, err)
			config, err := f.ConfigMap()
			require.NoError(t, err)
			objects := []any{config, kubeconfig, f.Service(), f.Deployment(nil, "hash")}
			for _, c := range f.Certificates() {
				objects = append(objects, c)
			}
			golden.Assert(t, name, objects...)
		})
	}
}

func TestServicePort(t *testing.T) {
	assert.EqualValues(t, 8443, loaded().ServicePort(), "the front proxy's own port")
	assert.EqualValues(t, 443, minimal().ServicePort(), "else the RootShard's")
	f := minimal()
	f.RootShard.Spec.External.Port = 0
	assert.EqualValues(t, 6443, f.ServicePort(), "else 6443")
}

func TestGroupsArePlainCommaSeparated(t *testing.T) {
	assert.Contains(t, loaded().Args(), "--authentication-drop-groups=system:masters,system:kcp:admin")
	assert.Contains(t, loaded().Args(), "--authentication-pass-on-groups=team-a")
}

// TestVersionGoldens renders the front proxy's Deployment at each kcp minor kcp-setups
// supports, so that a review sees the version gates: the requestheader CA and flags that let
// the shards' mount proxies through from v0.31.6 and v0.32.3.
func TestVersionGoldens(t *testing.T) {
	for minor, tag := range map[string]string{"v0.30": "v0.30.0", "v0.31": "v0.31.6", "v0.32": "v0.32.3"} {
		t.Run(minor, func(t *testing.T) {
			f := minimal()
			f.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: tag}
			golden.Assert(t, "minimal-"+minor, f.Deployment(nil, "hash"))
		})
	}
}
