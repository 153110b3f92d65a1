package frontproxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
)

// loadedProxy is a RootShard whose spec.proxy sets every field the root shard proxy realizes.
func loadedProxy() RootShardProxy {
	rs := rootShard()
	rs.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: "v0.31.0"}
	rs.Spec.CABundleSecretRef = &corev1.LocalObjectReference{Name: "partner-ca"}
	rs.Spec.Proxy = &operatorv1alpha1.RootShardProxySpec{ComponentSpec: operatorv1alpha1.ComponentSpec{
		Image:    &operatorv1alpha1.ImageSpec{Repository: "registry.example.com/kcp", Tag: "v0.32.3"},
		Replicas: ptr.To[int32](3),
		Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("100m")}},
		CertificateTemplates: operatorv1alpha1.CertificateTemplateMap{"server": {Spec: &operatorv1alpha1.CertificateSpecTemplate{DNSNames: []string{"proxy.internal"}}}},
		ServiceTemplate:      &operatorv1alpha1.ServiceTemplate{Metadata: &operatorv1alpha1.MetadataTemplate{Labels: map[string]string{"team": "a"}}},
		DeploymentTemplate: &operatorv1alpha1.DeploymentTemplate{Spec: &operatorv1alpha1.DeploymentSpecTemplate{Template: &operatorv1alpha1.PodTemplateSpec{
			Spec: &operatorv1alpha1.PodSpecTemplate{NodeSelector: map[string]string{"disk": "ssd"}}}}},
		ExtraArgs:         []string{"--v=4"},
		ExtraVolumes:      []corev1.Volume{{Name: "extra", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		ExtraVolumeMounts: []corev1.VolumeMount{{Name: "extra", MountPath: "/var/extra"}},
		Logging:           &operatorv1alpha1.LoggingSpec{Level: 3},
	}}
	return RootShardProxy{RootShard: rs}
}

func TestRootShardProxyGoldens(t *testing.T) {
	minimalProxy := RootShardProxy{RootShard: rootShard()}
	old := RootShardProxy{RootShard: rootShard()}
	old.RootShard.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: "v0.30.0"}
	for name, p := range map[string]RootShardProxy{"rootshard-proxy-minimal": minimalProxy, "rootshard-proxy-loaded": loadedProxy(),
		"rootshard-proxy-v0.30": old} {
		t.Run(name, func(t *testing.T) {
			kubeconfig, err := p.DynamicKubeconfig()
			require.NoError(t, err)
			config, err := p.ConfigMap()
			require.NoError(t, err)
			objects := []any{config, kubeconfig, p.MergedClientCA([]byte("client-ca\n"), []byte("partner-client-ca\n")), p.Service(), p.Deployment(nil, "hash")}
			for _, c := range p.Certificates() {
				objects = append(objects, c)
			}
			golden.Assert(t, name, objects...)
		})
	}
}

// TestRootShardProxyIsKcpOperators pins what kcp-operator names and shapes the same way, and
// what callers rely on: names, identities, the shard mapping, and spec.proxy's fields.
func TestRootShardProxyIsKcpOperators(t *testing.T) {
	p := loadedProxy()
	assert.Equal(t, "root-proxy", p.ServiceName())
	assert.Equal(t, "root-proxy", p.DeploymentName())
	assert.Equal(t, "root-proxy-config", p.ConfigMapName())
	assert.Equal(t, "root-proxy-dynamic-kubeconfig", p.DynamicKubeconfigName())
	var names []string
	for _, l := range p.Leaves() {
		names = append(names, l.Name+" "+l.CommonName)
	}
	assert.Equal(t, []string{"root-proxy-server root-proxy", "root-proxy-kubeconfig kcp-root-shard-proxy",
		"root-proxy-requestheader kcp-root-shard-proxy"}, names)
	assert.Equal(t, []string{"root-proxy", "root-proxy.team-a", "root-proxy.team-a.svc", "root-proxy.team-a.svc.cluster.local"},
		p.Leaves()[0].DNSNames, "reached inside the cluster only: no external hostname")

	args := p.Args()
	assert.Contains(t, args, "--requestheader-allowed-names=kcp-root-shard-proxy,kcp-mounts-proxy")
	assert.Equal(t, []string{"-v=3", "--v=4"}, args[len(args)-2:], "logging, then extraArgs last as written")
	for _, a := range args {
		assert.NotContains(t, a, "--authentication-drop-groups", "kcp-front-proxy's default drop groups stay: system:masters is not passed on")
	}

	d := p.Deployment(nil, "hash")
	c := d.Spec.Template.Spec.Containers[0]
	assert.Equal(t, "registry.example.com/kcp:v0.32.3", *c.Image, "spec.proxy.image")
	assert.EqualValues(t, 3, *d.Spec.Replicas)
	assert.Equal(t, "ssd", d.Spec.Template.Spec.NodeSelector["disk"])

	unset := RootShardProxy{RootShard: rootShard()}
	unset.RootShard.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: "v0.31.0"}
	assert.Equal(t, "ghcr.io/kcp-dev/kcp:v0.31.0", *unset.Deployment(nil, "h").Spec.Template.Spec.Containers[0].Image,
		"without spec.proxy.image, the root shard's release")
	assert.NotContains(t, unset.Args(), "--requestheader-allowed-names=kcp-root-shard-proxy,kcp-mounts-proxy",
		"v0.31.0 has no mount proxy")
	assert.Nil(t, unset.RootShard.Spec.Proxy, "building does not change the RootShard")
}
