package cacheserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

func minimal() CacheServer {
	return CacheServer{&operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "team-a"}}}
}

func loaded() CacheServer {
	c := minimal()
	c.Spec.ClusterDomain = "example.internal"
	c.Spec.Replicas = ptr.To[int32](3)
	c.Spec.Etcd = &operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd-0.etcd:2379", "https://etcd-1.etcd:2379"}, Prefix: "/cache",
		TLSConfig: &operatorv1alpha1.EtcdTLSConfig{SecretRef: corev1.LocalObjectReference{Name: "etcd-client"}}}
	c.Spec.Certificates = &operatorv1alpha1.Certificates{IssuerRef: &operatorv1alpha1.ObjectReference{Name: "corp-ca", Kind: "ClusterIssuer", Group: "cert-manager.io"}}
	c.Spec.CertificateTemplates = operatorv1alpha1.CertificateTemplateMap{
		"server": {Spec: &operatorv1alpha1.CertificateSpecTemplate{DNSNames: []string{"cache.internal"}}},
		"ca":     {Metadata: &operatorv1alpha1.MetadataTemplate{Labels: map[string]string{"team": "a"}}},
	}
	c.Spec.Logging = &operatorv1alpha1.LoggingSpec{Level: 4}
	c.Spec.ExtraArgs = []string{"--max-requests-inflight=800"}
	c.Spec.ServiceTemplate = &operatorv1alpha1.ServiceTemplate{Spec: &operatorv1alpha1.ServiceSpecTemplate{Type: corev1.ServiceTypeClusterIP}}
	return c
}

func TestBuilders(t *testing.T) {
	for name, c := range map[string]CacheServer{"minimal": minimal(), "loaded": loaded()} {
		t.Run(name, func(t *testing.T) {
			kubeconfig, err := c.Kubeconfig([]byte("CA PEM"), []byte("CERT PEM"), []byte("KEY PEM"))
			require.NoError(t, err)
			objects := []any{c.ClientCA([]byte("CA PEM")), kubeconfig, c.Service(), c.Deployment(nil, "hash")}
			p := c.PKI()
			for _, i := range p.Issuers {
				objects = append(objects, i)
			}
			for _, cert := range p.Certificates {
				objects = append(objects, cert)
			}
			golden.Assert(t, name, objects...)
		})
	}
}

func TestBootstrapIsSharedNotOwned(t *testing.T) {
	p := minimal().PKI()
	require.True(t, p.Bootstrap, "without spec.certificates the namespace bootstrap signs the CA")
	var names []string
	for _, cert := range minimal().Certificates() {
		names = append(names, *cert.Name)
		assert.Equal(t, "cache", cert.Labels[pki.OwnerLabel(Kind)], "every own Certificate is owned")
	}
	assert.Equal(t, []string{"cache-ca", "cache-server", "cache-client-certificate"}, names, "the bootstrap CA is not the cache server's own")
	assert.False(t, loaded().PKI().Bootstrap)
}

func TestCASecretRefBacksTheIssuerDirectly(t *testing.T) {
	c := minimal()
	c.Spec.Certificates = &operatorv1alpha1.Certificates{CASecretRef: &corev1.LocalObjectReference{Name: "corp-ca"}}
	p := c.PKI()
	require.Len(t, p.Issuers, 1)
	assert.Equal(t, "corp-ca", *p.Issuers[0].Spec.CA.SecretName)
	assert.Equal(t, "corp-ca", c.CASecret())
	for _, cert := range p.Certificates {
		assert.NotEqual(t, "cache-ca", *cert.Name, "no CA Certificate: the user's CA signs the leaves")
	}
}

func TestEmbeddedEtcdHasOneReplicaAndAScratchVolume(t *testing.T) {
	c := minimal()
	d := c.Deployment(nil, "hash")
	assert.EqualValues(t, 1, *d.Spec.Replicas, "a new embedded cache has one replica")
	scaled := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)}}
	assert.EqualValues(t, 1, *c.Deployment(scaled, "hash").Spec.Replicas, "and keeps one: the embedded etcd cannot be shared")
	assert.Contains(t, d.Spec.Template.Spec.Containers[0].Args, "--embedded-etcd-directory=/var/etcd")
	assert.Equal(t, "etcd-data", *d.Spec.Template.Spec.Volumes[2].Name)
	assert.NotNil(t, d.Spec.Template.Spec.Volumes[2].EmptyDir)

	l := loaded()
	assert.NotContains(t, l.Args(), "--embedded-etcd-directory=/var/etcd")
	assert.Contains(t, l.Args(), "--etcd-servers=https://etcd-0.etcd:2379,https://etcd-1.etcd:2379")
	l.Spec.Replicas = nil
	assert.EqualValues(t, 3, *l.Deployment(scaled, "hash").Spec.Replicas, "with external etcd an HPA may own the replicas")
}

func TestKubeconfigCarriesItsCredentials(t *testing.T) {
	secret, err := minimal().Kubeconfig([]byte("CA"), []byte("CERT"), []byte("KEY"))
	require.NoError(t, err)
	cfg, err := clientcmd.Load(secret.Data[kcp.KubeconfigKey])
	require.NoError(t, err)
	rest, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	require.NoError(t, err)
	assert.Equal(t, "https://cache-cache-server.team-a.svc.cluster.local:6443", rest.Host)
	assert.Equal(t, []byte("CA"), rest.CAData)
	assert.Equal(t, []byte("CERT"), rest.CertData)
	assert.Equal(t, []byte("KEY"), rest.KeyData)
	assert.Equal(t, "cache-kubeconfig", *secret.Name)
}

// TestExtraArgsComeLastAsWritten: kcp-operator's users write a flag and its value as two
// entries, which must reach the cache server unchanged, in order and after the server's flags.
func TestExtraArgsComeLastAsWritten(t *testing.T) {
	c := loaded()
	extra := []string{"--synthetic-delay", "1s", "-v=6"}
	c.Spec.ExtraArgs = extra
	args := c.Args()
	require.Greater(t, len(args), len(extra))
	assert.Equal(t, extra, args[len(args)-len(extra):])
}

// TestCATemplateUnderEitherKey checks that kcp-operator's key root-ca customizes the CA as
// this server's key ca does.
func TestCATemplateUnderEitherKey(t *testing.T) {
	for _, key := range []string{CARole, RootCARole} {
		t.Run(key, func(t *testing.T) {
			c := minimal()
			c.Spec.CertificateTemplates = operatorv1alpha1.CertificateTemplateMap{
				key: {Metadata: &operatorv1alpha1.MetadataTemplate{Labels: map[string]string{"from": key}}},
			}
			var found bool
			for _, cert := range c.Certificates() {
				if *cert.Name == c.CAName() {
					found = true
					assert.Equal(t, key, cert.Labels["from"])
				} else {
					assert.NotContains(t, cert.Labels, "from", "only the CA takes the CA's template")
				}
			}
			assert.True(t, found)
		})
	}
}

// TestVersionGoldens renders the cache server's Deployment at each kcp minor kcp-setups
// supports, so that a review sees the version gates: no --client-ca-file before v0.30.2,
// --logging-format and an external etcd from v0.31.0.
func TestVersionGoldens(t *testing.T) {
	for minor, tag := range map[string]string{"v0.30": "v0.30.0", "v0.31": "v0.31.6", "v0.32": "v0.32.3"} {
		t.Run(minor, func(t *testing.T) {
			c := minimal()
			c.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: tag}
			golden.Assert(t, "minimal-"+minor, c.Deployment(nil, "hash"))
		})
	}
}
