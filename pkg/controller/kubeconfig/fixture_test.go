package kubeconfig

import (
	"crypto/x509/pkix"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/kubeconfig"
)

type fixture struct {
	*controllertest.Fixture[*operatorv1alpha1.Kubeconfig, operatorv1alpha1.KubeconfigStatus]
	c *Controller
}

// newFixture returns a controller over caches holding objs: Kubeconfigs (also in our fake
// clientset), RootShards, Shards and FrontProxies, host Secrets, and the copies of
// reference Secrets (labelled operator.kcp.io/reference).
func newFixture(t *testing.T, objs ...metav1.Object) *fixture {
	f := &fixture{Fixture: controllertest.NewFixture(t, kinds.Kubeconfig, objs...)}
	f.c = controllertest.ControllerOf[Controller](f.Fixture)
	return f
}

// sync syncs a Kubeconfig and lets its cache catch up.
func (f *fixture) sync(t *testing.T, name string) *operatorv1alpha1.Kubeconfig {
	t.Helper()
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/"+name))
	return f.Stored(t, "team-a", name)
}

// issue plays cert-manager for a Kubeconfig's Certificate: a real certificate that expires at
// notAfter, in its Secret, and the Certificate Ready; then the rest of the host catches up.
func (f *fixture) issue(t *testing.T, name string, notAfter time.Time, resourceVersion string) (certPEM []byte) {
	t.Helper()
	certPEM, keyPEM := selfSigned(t, name, notAfter)
	secretName := kubeconfig.CertificateName(name)
	require.NoError(t, f.Host.Caches["secrets"].Update(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: secretName, ResourceVersion: resourceVersion,
			Labels: pki.Labels(kubeconfig.Kind, name, kubeconfig.CertificateComponent)},
		Data: map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM, "ca.crt": []byte("CA")},
	}))
	f.Host.CatchUp(t)
	return certPEM
}

// selfSigned is a client certificate that expires at notAfter (within a year), and its key,
// minted by the signer the kubeconfig subresource uses.
func selfSigned(t *testing.T, cn string, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	ca, err := credentials.ParseCA(credentialstest.NewCA(t, "front-proxy-client-ca"))
	require.NoError(t, err)
	m, err := ca.Mint(pkix.Name{CommonName: cn}, notAfter.Add(-time.Hour), time.Hour)
	require.NoError(t, err)
	return m.CertPEM, m.KeyPEM
}

func rootShard(name string) *operatorv1alpha1.RootShard {
	return &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 443}}}
}

func ref(name string) operatorv1alpha1.RootShardConfig {
	return operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: name}}
}

func shard(name, rootShard string) *operatorv1alpha1.Shard {
	return &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"},
		Spec: operatorv1alpha1.ShardSpec{RootShard: ref(rootShard)}}
}

func frontProxy(name, rootShard string) *operatorv1alpha1.FrontProxy {
	return &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"},
		Spec: operatorv1alpha1.FrontProxySpec{RootShard: ref(rootShard),
			External: &operatorv1alpha1.FrontProxyExternalConfig{Hostname: "edge.example.com", Port: 8443}}}
}

// caBundle is a RootShard's merged CA bundle, as the RootShard controller writes it.
func caBundle(rootShard string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: rootShard + "-merged-ca-bundle", ResourceVersion: "1",
		Labels: pki.Labels("rootshard", rootShard, "merged-ca-bundle")},
		Data: map[string][]byte{"tls.crt": []byte("-----BEGIN CERTIFICATE-----\nU0VSVkVSIENB\n-----END CERTIFICATE-----\n")}}
}

// kubeconfigFor is a Kubeconfig with its finalizer toward target.
func kubeconfigFor(name string, target operatorv1alpha1.KubeconfigTarget) *operatorv1alpha1.Kubeconfig {
	return &operatorv1alpha1.Kubeconfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", Generation: 1, Finalizers: []string{kinds.Kubeconfig.Finalizer()}},
		Spec: operatorv1alpha1.KubeconfigSpec{
			Target:          target,
			TargetWorkspace: "root",
			Username:        "ci-bot",
			Groups:          []string{"team-a:developers"},
			Validity:        metav1.Duration{Duration: 24 * time.Hour},
			SecretRef:       corev1.LocalObjectReference{Name: name + "-kubeconfig"},
		},
	}
}

func toFrontProxy(name string) operatorv1alpha1.KubeconfigTarget {
	return operatorv1alpha1.KubeconfigTarget{FrontProxyRef: &corev1.LocalObjectReference{Name: name}}
}

func toSecret(name string) operatorv1alpha1.KubeconfigTarget {
	return operatorv1alpha1.KubeconfigTarget{RootShardSecretRef: &corev1.LocalObjectReference{Name: name}}
}
