package v1alpha1

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func defaulted[T runtime.Object](t *testing.T, obj T) T {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	scheme.Default(obj)
	return obj
}

func TestDefaults(t *testing.T) {
	t.Run("RootShard", func(t *testing.T) {
		rs := defaulted(t, &RootShard{Spec: RootShardSpec{Certificates: &Certificates{IssuerRef: &ObjectReference{Name: "ca"}}}})
		assert.Equal(t, "cluster.local", rs.Spec.ClusterDomain)
		assert.EqualValues(t, 6443, rs.Spec.External.Port)
		assert.Equal(t, "Issuer", rs.Spec.Certificates.IssuerRef.Kind)
		assert.Equal(t, "cert-manager.io", rs.Spec.Certificates.IssuerRef.Group)
		assert.Nil(t, rs.Spec.Replicas, "replicas stays unset so that an HPA may own it")
		assert.Nil(t, rs.Spec.Image, "the image is applied at realization, not stored")
	})
	t.Run("RootShard keeps given values", func(t *testing.T) {
		rs := defaulted(t, &RootShard{Spec: RootShardSpec{
			CommonShardSpec: CommonShardSpec{ClusterDomain: "corp.local"},
			External:        ExternalConfig{Port: 443},
			Certificates:    &Certificates{IssuerRef: &ObjectReference{Name: "ca", Kind: "ClusterIssuer", Group: "example.com"}},
		}})
		assert.Equal(t, "corp.local", rs.Spec.ClusterDomain)
		assert.EqualValues(t, 443, rs.Spec.External.Port)
		assert.Equal(t, "ClusterIssuer", rs.Spec.Certificates.IssuerRef.Kind)
		assert.Equal(t, "example.com", rs.Spec.Certificates.IssuerRef.Group)
	})
	t.Run("Shard", func(t *testing.T) {
		assert.Equal(t, "cluster.local", defaulted(t, &Shard{}).Spec.ClusterDomain)
	})
	t.Run("etcd without endpoints is managed, with 3 members of 8Gi", func(t *testing.T) {
		for kind, etcd := range map[string]EtcdConfig{
			"RootShard": defaulted(t, &RootShard{}).Spec.Etcd,
			"Shard":     defaulted(t, &Shard{Spec: ShardSpec{CommonShardSpec: CommonShardSpec{Etcd: EtcdConfig{Prefix: "/p"}}}}).Spec.Etcd,
		} {
			if assert.NotNil(t, etcd.Managed, kind) {
				assert.Equal(t, ptr.To[int32](3), etcd.Managed.Replicas, kind)
				if assert.NotNil(t, etcd.Managed.Storage, kind) {
					assert.Equal(t, "8Gi", etcd.Managed.Storage.VolumeSize.String(), kind)
					assert.Nil(t, etcd.Managed.Storage.StorageClassName, kind)
				}
				assert.Nil(t, etcd.Managed.Image, "%s: the etcd image is applied at realization, not stored", kind)
			}
		}
	})
	t.Run("managed etcd keeps given values", func(t *testing.T) {
		size := resource.MustParse("20Gi")
		etcd := defaulted(t, &Shard{Spec: ShardSpec{CommonShardSpec: CommonShardSpec{Etcd: EtcdConfig{Managed: &ManagedEtcd{
			Replicas: ptr.To[int32](1),
			Storage:  &EtcdStorage{VolumeSize: &size, StorageClassName: ptr.To("fast")},
		}}}}}).Spec.Etcd
		assert.Equal(t, ptr.To[int32](1), etcd.Managed.Replicas)
		assert.Equal(t, "20Gi", etcd.Managed.Storage.VolumeSize.String())
		assert.Equal(t, ptr.To("fast"), etcd.Managed.Storage.StorageClassName)
	})
	t.Run("etcd with endpoints stays external", func(t *testing.T) {
		etcd := defaulted(t, &RootShard{Spec: RootShardSpec{CommonShardSpec: CommonShardSpec{Etcd: EtcdConfig{Endpoints: []string{"https://etcd:2379"}}}}}).Spec.Etcd
		assert.Nil(t, etcd.Managed)
	})
	t.Run("CacheServer etcd is not made managed", func(t *testing.T) {
		assert.Nil(t, defaulted(t, &CacheServer{}).Spec.Etcd)
		cs := defaulted(t, &CacheServer{Spec: CacheServerSpec{Etcd: &EtcdConfig{Endpoints: []string{"https://etcd:2379"}}}})
		assert.Nil(t, cs.Spec.Etcd.Managed)
	})
	t.Run("CacheServer", func(t *testing.T) {
		cs := defaulted(t, &CacheServer{})
		assert.Equal(t, "cluster.local", cs.Spec.ClusterDomain)
		assert.Nil(t, cs.Spec.Replicas)
	})
	t.Run("FrontProxy", func(t *testing.T) {
		fp := defaulted(t, &FrontProxy{Spec: FrontProxySpec{External: &FrontProxyExternalConfig{Hostname: "x"}}})
		assert.Zero(t, fp.Spec.External.Port, "a front proxy inherits the RootShard's port")
	})
	t.Run("certificate template issuerRef, every kind", func(t *testing.T) {
		templates := func() CertificateTemplateMap {
			return CertificateTemplateMap{
				"server": {Spec: &CertificateSpecTemplate{IssuerRef: &ObjectReference{Name: "acme"}}},
				"client": {Spec: &CertificateSpecTemplate{IssuerRef: &ObjectReference{Name: "pca", Kind: "ClusterIssuer", Group: "awspca.cert-manager.io"}}},
			}
		}
		for kind, got := range map[string]CertificateTemplateMap{
			"RootShard":   defaulted(t, &RootShard{Spec: RootShardSpec{CommonShardSpec: CommonShardSpec{ComponentSpec: ComponentSpec{CertificateTemplates: templates()}}}}).Spec.CertificateTemplates,
			"Shard":       defaulted(t, &Shard{Spec: ShardSpec{CommonShardSpec: CommonShardSpec{ComponentSpec: ComponentSpec{CertificateTemplates: templates()}}}}).Spec.CertificateTemplates,
			"FrontProxy":  defaulted(t, &FrontProxy{Spec: FrontProxySpec{ComponentSpec: ComponentSpec{CertificateTemplates: templates()}}}).Spec.CertificateTemplates,
			"CacheServer": defaulted(t, &CacheServer{Spec: CacheServerSpec{ComponentSpec: ComponentSpec{CertificateTemplates: templates()}}}).Spec.CertificateTemplates,
		} {
			assert.Equal(t, ObjectReference{Name: "acme", Kind: "Issuer", Group: "cert-manager.io"}, *got["server"].Spec.IssuerRef, kind)
			assert.Equal(t, ObjectReference{Name: "pca", Kind: "ClusterIssuer", Group: "awspca.cert-manager.io"}, *got["client"].Spec.IssuerRef, kind)
		}
		kc := defaulted(t, &Kubeconfig{Spec: KubeconfigSpec{CertificateTemplate: &CertificateTemplate{Spec: &CertificateSpecTemplate{IssuerRef: &ObjectReference{Name: "acme"}}}}})
		assert.Equal(t, "Issuer", kc.Spec.CertificateTemplate.Spec.IssuerRef.Kind)
		assert.Equal(t, "cert-manager.io", kc.Spec.CertificateTemplate.Spec.IssuerRef.Group)
	})
	t.Run("Kubeconfig", func(t *testing.T) {
		assert.Equal(t, "root", defaulted(t, &Kubeconfig{}).Spec.TargetWorkspace)
		assert.Equal(t, "root:team", defaulted(t, &Kubeconfig{Spec: KubeconfigSpec{TargetWorkspace: "root:team"}}).Spec.TargetWorkspace)
	})
	t.Run("KubeconfigRequest", func(t *testing.T) {
		req := defaulted(t, &KubeconfigRequest{})
		assert.Equal(t, ptr.To[int64](3600), req.Spec.ExpirationSeconds)
		assert.Equal(t, "root", req.Spec.Workspace)
		req = defaulted(t, &KubeconfigRequest{Spec: KubeconfigRequestSpec{ExpirationSeconds: ptr.To[int64](900)}})
		assert.Equal(t, ptr.To[int64](900), req.Spec.ExpirationSeconds)
	})
}
