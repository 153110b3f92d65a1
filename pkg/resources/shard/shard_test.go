package shard

import (
	"strings"
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
	s.Spec.Auth = &operatorv1alpha1.AuthSpec{
		ServiceAccount: &operatorv1alpha1.ServiceAccountAuthentication{Enabled: true},
		Webhook:        &operatorv1alpha1.AuthWebhookSpec{ConfigSecretName: "authn-hook", Version: "v1beta1"},
		TokenAuthFile:  &operatorv1alpha1.TokenAuthFileSpec{SecretName: "tokens", Key: "tokens.csv"},
		DropGroups:     []string{"system:masters"},
	}
	return s
}

// issuers are the shards of the RootShard whose service-account Secret exists, as the
// controller hands them: the shard itself among them.
var issuers = []string{"root", "shard-1", "shard-2"}

func TestBuilders(t *testing.T) {
	for name, s := range map[string]*operatorv1alpha1.Shard{"minimal": minimalShard(), "loaded": loadedShard()} {
		t.Run(name, func(t *testing.T) {
			rs := rootShard()
			k := Shard(s, rs)
			k.ServiceAccountIssuers = issuers
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
		assert.Contains(t, []string{"root-server-ca", "root-client-ca", "root-service-account-ca"}, *c.Spec.IssuerRef.Name, *c.Name)
		assert.Equal(t, "shard-1", c.Labels["operator.kcp.io/shard"])
	}
}

// TestServiceAccountAuthentication: with auth.serviceAccount enabled, a shard verifies the
// tokens of its root shard and of the other shards with their public keys, mounted without
// their private keys, and its own with its key pair as before; without it, only its own.
func TestServiceAccountAuthentication(t *testing.T) {
	k := Shard(loadedShard(), rootShard())
	k.ServiceAccountIssuers = issuers
	assert.Equal(t, []string{
		"--service-account-key-file=/etc/kcp/tls/service-account/tls.crt",
		"--service-account-key-file=/etc/kcp/tls/service-account-keys/root/tls.crt",
		"--service-account-key-file=/etc/kcp/tls/service-account-keys/shard-2/tls.crt",
	}, withPrefix(k.Args(), "--service-account-key-file="), "one per shard, its own once")
	assert.Contains(t, k.MountedSecrets(), "root-service-account", "a new key rolls the pods")
	assert.Contains(t, k.MountedSecrets(), "shard-2-service-account")
	assert.NotContains(t, k.RealizedSecrets(), "shard-2-service-account", "another shard's key does not hold back the Deployment")

	off := Shard(minimalShard(), rootShard())
	off.ServiceAccountIssuers = issuers
	assert.Equal(t, []string{"--service-account-key-file=/etc/kcp/tls/service-account/tls.crt"},
		withPrefix(off.Args(), "--service-account-key-file="), "disabled: its own key only")
	assert.NotContains(t, off.MountedSecrets(), "root-service-account")
}

func TestTokenAuthentication(t *testing.T) {
	args := Shard(loadedShard(), rootShard()).Args()
	assert.Contains(t, args, "--authentication-token-webhook-config-file=/etc/kcp/authentication/webhook/kubeconfig")
	assert.Contains(t, args, "--authentication-token-webhook-version=v1beta1")
	assert.Contains(t, args, "--token-auth-file=/etc/kcp/authentication/token/tokens.csv")
	assert.Empty(t, withPrefix(args, "--authentication-drop-groups"), "groups are the front proxy's")
}

func withPrefix(args []string, prefix string) []string {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			out = append(out, a)
		}
	}
	return out
}

// TestExtraArgsComeLastAsWritten: kcp-operator's users write a flag and its value as two
// entries, which must reach kcp unchanged, in order and after the server's flags.
func TestExtraArgsComeLastAsWritten(t *testing.T) {
	s := loadedShard()
	extra := []string{"--encryption-provider-config", "/etc/kcp/encryption/config.yaml", "-v", "6"}
	s.Spec.ExtraArgs = extra
	args := Shard(s, rootShard()).Args()
	require.Greater(t, len(args), len(extra))
	assert.Equal(t, extra, args[len(args)-len(extra):])
}
