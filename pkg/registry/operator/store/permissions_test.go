package store_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/rootshard"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/shard"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// held renders permissions as "field=value: verb resource.group name", to compare whole lists.
func held(perms []store.Permission) []string {
	var out []string
	for _, p := range perms {
		out = append(out, p.Field+"="+p.Value+": "+p.Verb+" "+p.Resource+"."+p.Group+" "+p.Name)
	}
	return out
}

func acme(name string) *operator.CertificateSpecTemplate {
	return &operator.CertificateSpecTemplate{IssuerRef: &operator.ObjectReference{Name: name, Kind: "ClusterIssuer", Group: "cert-manager.io"}}
}

// TestKindsHoldCertificateFieldsToPermissions checks each kind's wiring: every per-certificate
// issuerRef needs create on certificates, every CA bundle Secret needs get, each at its path.
func TestKindsHoldCertificateFieldsToPermissions(t *testing.T) {
	templates := operator.CertificateTemplateMap{"server": {Spec: acme("public")}, "client": {}, "server-ca": {Spec: acme("corp")}}
	bundles := func() (*corev1.LocalObjectReference, *corev1.LocalObjectReference) {
		return &corev1.LocalObjectReference{Name: "extra-ca"}, &corev1.LocalObjectReference{Name: "extra-client-ca"}
	}
	commonShard := func() operator.CommonShardSpec {
		ca, client := bundles()
		return operator.CommonShardSpec{ComponentSpec: operator.ComponentSpec{CertificateTemplates: templates},
			CABundleSecretRef: ca, ClientCABundleRef: client}
	}
	shardWant := []string{
		"spec.certificateTemplates[server].spec.issuerRef=ClusterIssuer/public: create certificates.cert-manager.io ",
		"spec.certificateTemplates[server-ca].spec.issuerRef=ClusterIssuer/corp: create certificates.cert-manager.io ",
		"spec.caBundleSecretRef=Secret/extra-ca: get secrets. extra-ca",
		"spec.clientCABundleRef=Secret/extra-client-ca: get secrets. extra-client-ca",
	}

	t.Run("RootShard", func(t *testing.T) {
		rs := &operator.RootShard{Spec: operator.RootShardSpec{CommonShardSpec: commonShard(),
			Certificates: &operator.Certificates{IssuerRef: &operator.ObjectReference{Name: "root", Kind: "Issuer"}}}}
		want := append(shardWant[:2:2], "spec.certificates.issuerRef=Issuer/root: create certificates.cert-manager.io ")
		assert.Equal(t, append(want, shardWant[2:]...), held(rootshard.Kind.Permissions(rs)))
	})
	t.Run("Shard", func(t *testing.T) {
		s := &operator.Shard{Spec: operator.ShardSpec{CommonShardSpec: commonShard()}}
		assert.Equal(t, shardWant, held(shard.Kind.Permissions(s)))
	})
	t.Run("FrontProxy", func(t *testing.T) {
		ca, client := bundles()
		fp := &operator.FrontProxy{Spec: operator.FrontProxySpec{ComponentSpec: operator.ComponentSpec{CertificateTemplates: templates},
			CABundleSecretRef: ca, ClientCABundleRef: client}}
		assert.Equal(t, shardWant, held(frontproxy.Kind.Permissions(fp)))
	})
	t.Run("Kubeconfig", func(t *testing.T) {
		kc := &operator.Kubeconfig{Spec: operator.KubeconfigSpec{CertificateTemplate: &operator.CertificateTemplate{Spec: acme("users")}}}
		assert.Equal(t, []string{"spec.certificateTemplate.spec.issuerRef=ClusterIssuer/users: create certificates.cert-manager.io "},
			held(kubeconfig.Kind.Permissions(kc)))
		assert.Empty(t, kubeconfig.Kind.Permissions(&operator.Kubeconfig{}), "no template, nothing to hold")
	})
	t.Run("nothing set", func(t *testing.T) {
		assert.Empty(t, shard.Kind.Permissions(&operator.Shard{}))
		assert.Empty(t, frontproxy.Kind.Permissions(&operator.FrontProxy{}))
	})
}

// TestKindsHoldMountedSecretsToPermissions checks that every Secret or ConfigMap a spec has
// the server mount into pods needs get on it, at its path: extra volumes (projected sources
// too), etcd client TLS, the audit policy and webhook, and the authorization webhook.
func TestKindsHoldMountedSecretsToPermissions(t *testing.T) {
	volumes := []corev1.Volume{
		{Name: "a", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "encryption"}}},
		{Name: "b", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}},
		{Name: "c", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "d", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "projected-secret"}}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "projected-config"}}},
		}}}},
	}
	volumesWant := []string{
		"spec.extraVolumes[0].secret.secretName=Secret/encryption: get secrets. encryption",
		"spec.extraVolumes[1].configMap.name=ConfigMap/settings: get configmaps. settings",
		"spec.extraVolumes[3].projected.sources[0].secret.name=Secret/projected-secret: get secrets. projected-secret",
		"spec.extraVolumes[3].projected.sources[1].configMap.name=ConfigMap/projected-config: get configmaps. projected-config",
	}
	etcd := operator.EtcdConfig{Endpoints: []string{"https://etcd:2379"},
		TLSConfig: &operator.EtcdTLSConfig{SecretRef: corev1.LocalObjectReference{Name: "etcd-client"}}}
	s := &operator.Shard{Spec: operator.ShardSpec{CommonShardSpec: operator.CommonShardSpec{
		ComponentSpec: operator.ComponentSpec{ExtraVolumes: volumes},
		Etcd:          etcd,
		Audit: &operator.AuditSpec{Policy: &operator.AuditPolicySpec{ConfigMap: &operator.LocalDataKeyReference{Name: "audit", Key: "policy.yaml"}},
			Webhook: &operator.AuditWebhookSpec{ConfigSecretName: "audit-hook"}},
		Authorization: &operator.AuthorizationSpec{Webhook: &operator.AuthorizationWebhookSpec{ConfigSecretName: "authz-hook"}},
	}}}
	assert.Equal(t, append(volumesWant,
		"spec.etcd.tlsConfig.secretRef=Secret/etcd-client: get secrets. etcd-client",
		"spec.audit.policy.configMap=ConfigMap/audit: get configmaps. audit",
		"spec.audit.webhook.configSecretName=Secret/audit-hook: get secrets. audit-hook",
		"spec.authorization.webhook.configSecretName=Secret/authz-hook: get secrets. authz-hook",
	), held(shard.Kind.Permissions(s)))

	rs := &operator.RootShard{Spec: operator.RootShardSpec{CommonShardSpec: s.Spec.CommonShardSpec}}
	assert.Equal(t, held(shard.Kind.Permissions(s)), held(rootshard.Kind.Permissions(rs)), "a RootShard is held as a Shard")

	cs := &operator.CacheServer{Spec: operator.CacheServerSpec{ComponentSpec: operator.ComponentSpec{ExtraVolumes: volumes}, Etcd: &etcd}}
	assert.Equal(t, append(volumesWant[:4:4], "spec.etcd.tlsConfig.secretRef=Secret/etcd-client: get secrets. etcd-client"),
		held(cacheserver.Kind.Permissions(cs)))
	fp := &operator.FrontProxy{Spec: operator.FrontProxySpec{ComponentSpec: operator.ComponentSpec{ExtraVolumes: volumes}}}
	assert.Equal(t, volumesWant, held(frontproxy.Kind.Permissions(fp)))
}
