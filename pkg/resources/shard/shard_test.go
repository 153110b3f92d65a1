package shard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

func rootShard() *operatorv1alpha1.RootShard {
	return &operatorv1alpha1.RootShard{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{ClusterDomain: "cluster.local",
				Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}},
			External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 443},
		},
	}
}

func minimalShard() *operatorv1alpha1.Shard {
	return &operatorv1alpha1.Shard{
		ObjectMeta: metav1.ObjectMeta{Name: "shard-1", Namespace: "team-a"},
		Spec: operatorv1alpha1.ShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{ClusterDomain: "cluster.local",
				Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd-shard:2379"}}},
			RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}},
		},
	}
}

func loadedShard() *operatorv1alpha1.Shard {
	s := minimalShard()
	s.Spec.ShardBaseURL = "https://shard-1.shards.example.com:6443"
	s.Spec.Cache = &operatorv1alpha1.CacheConfig{Reference: &corev1.LocalObjectReference{Name: "cache"}}
	s.Spec.Replicas = ptr.To[int32](4)
	s.Spec.ExtraArgs = []string{"--v=3"}
	s.Spec.Etcd.TLSConfig = &operatorv1alpha1.EtcdTLSConfig{SecretRef: corev1.LocalObjectReference{Name: "etcd-client"}}
	s.Spec.CertificateTemplates = operatorv1alpha1.CertificateTemplateMap{
		"server": {Spec: &operatorv1alpha1.CertificateSpecTemplate{DNSNames: []string{"shard-1.internal"}}},
	}
	return s
}

func TestBuilders(t *testing.T) {
	for name, s := range map[string]*operatorv1alpha1.Shard{"minimal": minimalShard(), "loaded": loadedShard()} {
		t.Run(name, func(t *testing.T) {
			rs := rootShard()
			k := Shard(s, rs)
			client, err := ClientKubeconfig(s, rs)
			require.NoError(t, err)
			admin, err := k.AdminKubeconfig(kcp.LogicalClusterAdmin)
			require.NoError(t, err)
			objects := []any{client, admin, k.Service(), k.Deployment(nil, "hash")}
			for _, c := range Certificates(s, rs) {
				objects = append(objects, c)
			}
			golden.Assert(t, name, objects...)
		})
	}
}

func TestCacheFallsBackToTheRootShard(t *testing.T) {
	rs := rootShard()
	args := Shard(minimalShard(), rs).Args()
	assert.Contains(t, args, "--cache-kubeconfig=/etc/kcp/client-kubeconfig/kubeconfig", "without a cache, the root shard's")

	rs.Spec.Cache = &operatorv1alpha1.CacheConfig{Reference: &corev1.LocalObjectReference{Name: "rs-cache"}}
	k := Shard(minimalShard(), rs)
	assert.Equal(t, "rs-cache", k.Cache.Name, "the RootShard's cache")
	assert.Contains(t, k.Args(), "--cache-kubeconfig=/etc/cache-server/kubeconfig/kubeconfig")

	assert.Equal(t, "cache", Shard(loadedShard(), rs).Cache.Name, "the Shard's own cache wins")
}

func TestShardCertificatesAreSignedByTheRootShardsCAs(t *testing.T) {
	for _, c := range Certificates(minimalShard(), rootShard()) {
		assert.Contains(t, []string{"root-server-ca", "root-client-ca", "root-service-account-ca", "root-requestheader-client-ca"}, *c.Spec.IssuerRef.Name, *c.Name)
		assert.Equal(t, "shard-1", c.Labels["operator.kcp.io/shard"])
	}
}

// TestVersionGoldens renders a shard at each kcp minor kcp-setups supports, so that a
// review sees the version gates: --external-hostname before v0.31, the mount proxy's
// certificate, mount and flags on v0.31.6+ and v0.32.3+.
func TestVersionGoldens(t *testing.T) {
	for minor, tag := range map[string]string{"v0.30": "v0.30.0", "v0.31": "v0.31.6", "v0.32": "v0.32.3"} {
		t.Run(minor, func(t *testing.T) {
			s, rs := minimalShard(), rootShard()
			s.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: tag}
			objects := []any{Shard(s, rs).Deployment(nil, "hash")}
			for _, c := range Certificates(s, rs) {
				objects = append(objects, c)
			}
			golden.Assert(t, "minimal-"+minor, objects...)
		})
	}
}
