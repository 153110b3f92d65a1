package rootshard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
)

func minimalRootShard() *operatorv1alpha1.RootShard {
	return &operatorv1alpha1.RootShard{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{
				ClusterDomain: "cluster.local",
				Etcd:          operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}},
			},
			External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 6443},
		},
	}
}

func loadedRootShard() *operatorv1alpha1.RootShard {
	rs := minimalRootShard()
	rs.Spec.ClusterDomain = "corp.local"
	rs.Spec.ShardBaseURL = "https://root.shards.example.com:6443"
	rs.Spec.Certificates = &operatorv1alpha1.Certificates{IssuerRef: &operatorv1alpha1.ObjectReference{
		Name: "corp-ca", Kind: "ClusterIssuer", Group: "cert-manager.io"}}
	hour := metav1.Duration{Duration: 48 * time.Hour}
	rs.Spec.CertificateTemplates = operatorv1alpha1.CertificateTemplateMap{
		"server": {
			Metadata: &operatorv1alpha1.MetadataTemplate{Labels: map[string]string{"team": "a", "app.kubernetes.io/managed-by": "someone-else"}},
			Spec: &operatorv1alpha1.CertificateSpecTemplate{
				Subject:        &operatorv1alpha1.X509Subject{Organizations: []string{"Example Corp"}},
				DNSNames:       []string{"kcp.internal.example.com", "localhost"},
				IPAddresses:    []string{"10.0.0.10"},
				Duration:       &hour,
				PrivateKey:     &operatorv1alpha1.CertificatePrivateKeyTemplate{Algorithm: "RSA", KeySize: 4096},
				SecretTemplate: &operatorv1alpha1.MetadataTemplate{Annotations: map[string]string{"reflector": "yes"}},
			},
		},
		"root-ca":         {Spec: &operatorv1alpha1.CertificateSpecTemplate{Subject: &operatorv1alpha1.X509Subject{Countries: []string{"DE"}}}},
		"client-ca":       {Metadata: &operatorv1alpha1.MetadataTemplate{Annotations: map[string]string{"note": "client"}}},
		"service-account": {Spec: &operatorv1alpha1.CertificateSpecTemplate{PrivateKey: &operatorv1alpha1.CertificatePrivateKeyTemplate{Encoding: "PKCS1", RotationPolicy: "Never"}}},
	}
	return rs
}

func TestBuildPKI(t *testing.T) {
	for name, rs := range map[string]*operatorv1alpha1.RootShard{
		"pki-minimal": minimalRootShard(),
		"pki-loaded":  loadedRootShard(),
		"pki-ca-secret": func() *operatorv1alpha1.RootShard {
			rs := minimalRootShard()
			rs.Spec.Certificates = &operatorv1alpha1.Certificates{CASecretRef: &corev1.LocalObjectReference{Name: "my-ca"}}
			return rs
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			p := BuildPKI(rs)
			objects := []any{}
			for _, i := range p.Issuers {
				objects = append(objects, i)
			}
			for _, c := range p.Certificates {
				objects = append(objects, c)
			}
			golden.Assert(t, name, objects...)
		})
	}
}

func TestBuildPKIShapes(t *testing.T) {
	minimal := BuildPKI(minimalRootShard())
	assert.True(t, minimal.Bootstrap)
	// bootstrap self-signed + bootstrap CA + root CA + 7 intermediates (2 of them etcd's, even
	// with an external etcd: a Shard of the RootShard may have a managed one)
	assert.Len(t, minimal.Issuers, 10)
	// bootstrap CA + root CA + 7 intermediates + 6 leaves (the mount proxy's identity on kcp
	// v0.32.3) + the server's own identity toward kcp
	assert.Len(t, minimal.Certificates, 16)

	loaded := BuildPKI(loadedRootShard())
	assert.False(t, loaded.Bootstrap)
	assert.Equal(t, "corp-ca", *loaded.Certificates[0].Spec.IssuerRef.Name, "the root CA comes from the user's issuer")
	assert.Equal(t, "ClusterIssuer", *loaded.Certificates[0].Spec.IssuerRef.Kind)

	for _, c := range loaded.Certificates {
		assert.Equal(t, "kcp-setups", c.Labels["app.kubernetes.io/managed-by"], "a template cannot take %s away from the controllers", *c.Name)
		assert.Equal(t, "root", c.Labels["operator.kcp.io/rootshard"])
		for _, k := range []string{"app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/component", "operator.kcp.io/rootshard"} {
			assert.Equal(t, c.Labels[k], c.Spec.SecretTemplate.Labels[k], "the Secret of %s carries the owner label %s", *c.Name, k)
		}
	}
}

// The server's identity toward kcp is a cluster admin there: it is issued, but no pod of
// the root shard mounts it, and it is not among the Secrets whose change rolls the pods.
func TestOperatorIdentityIsNeverMounted(t *testing.T) {
	rs := workloadsRootShard()
	leaf := OperatorLeaf(rs)
	assert.Equal(t, "root-kcp-operator", leaf.Name)
	assert.Equal(t, "system:kcp-operator", leaf.CommonName)
	assert.Equal(t, []string{"system:kcp:admin"}, leaf.Organization)
	assert.Equal(t, pki.CAName(rs.Name, pki.ClientCA), leaf.Issuer)

	s := Server(rs)
	assert.NotContains(t, s.MountedSecrets(), leaf.Name)
	d := s.Deployment(nil, "hash")
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			assert.NotEqual(t, leaf.Name, *v.Secret.SecretName, "volume %s", *v.Name)
		}
	}
}
