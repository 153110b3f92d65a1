package store_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
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
