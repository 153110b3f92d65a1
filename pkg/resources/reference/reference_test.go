package reference

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

func testRootShard() *operatorv1alpha1.RootShard {
	port := int32(8443)
	return &operatorv1alpha1.RootShard{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{ClusterDomain: "cluster.local",
				Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}},
			External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 6443,
				PrivateHostname: "kcp.internal.example.com", PrivatePort: &port},
		},
	}
}

func pemOf(typ, content string) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: []byte(content)})
}

// testCAs are a RootShard's CA Secrets as cert-manager writes them: each tls.crt carries the
// chain up to the root CA.
func testCAs(rs *operatorv1alpha1.RootShard) RootShardCAs {
	rootCA := pemOf("CERTIFICATE", pki.RootCAName(rs.Name))
	cas := RootShardCAs{RootCA: rootCA, KeyPairs: map[pki.CA]KeyPair{}}
	for _, ca := range pki.IntermediateCAs {
		name := pki.CAName(rs.Name, ca)
		cas.KeyPairs[ca] = FromSecret(&corev1.Secret{Data: map[string][]byte{
			"tls.crt": append(pemOf("CERTIFICATE", name), rootCA...),
			"tls.key": pemOf("EC PRIVATE KEY", name),
		}})
	}
	first := func(ca pki.CA) []byte {
		b, err := pki.FirstCertificate(cas.KeyPairs[ca].Cert)
		if err != nil {
			panic(err)
		}
		return b
	}
	cas.Bundles = rootshard.CABundles{ServerCA: first(pki.ServerCA), ClientCA: first(pki.ClientCA),
		FrontProxyClientCA: first(pki.FrontProxyClientCA), ExtraClientCAs: pemOf("CERTIFICATE", "users-extra-client-ca")}
	return cas
}

func testCacheServer() cacheserver.CacheServer {
	return cacheserver.CacheServer{CacheServer: &operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "team-a"}}}
}

func testCacheSecret() *corev1ac.SecretApplyConfiguration {
	return ForCacheServer(testCacheServer(), pemOf("CERTIFICATE", "cache-ca"),
		KeyPair{Cert: pemOf("CERTIFICATE", "cache-client-certificate"), Key: pemOf("PRIVATE KEY", "cache-client-certificate")})
}

func buildRootShard(t *testing.T) []*corev1ac.SecretApplyConfiguration {
	rs := testRootShard()
	secrets, err := ForRootShard(rs, testCAs(rs))
	require.NoError(t, err)
	require.Len(t, secrets, len(RootShardReferences))
	return secrets
}

func TestGolden(t *testing.T) {
	var redacted []any
	for _, s := range append(buildRootShard(t), testCacheSecret()) {
		redacted = append(redacted, golden.RedactedSecret(s))
	}
	golden.Assert(t, "references", redacted...)
}

// Least privilege: each Secret holds its listed keys and no other, and a private key only
// under the key of a CA its consumer issues from.
func TestEachSecretHoldsOnlyItsKeys(t *testing.T) {
	secrets := append(buildRootShard(t), testCacheSecret())
	for i, r := range append(slices.Clone(RootShardReferences), CacheClient) {
		s := secrets[i]
		owner := "root"
		if r == CacheClient {
			owner = "cache"
		}
		assert.Equal(t, r.Name(owner), *s.Name)
		assert.Equal(t, slices.Sorted(slices.Values(append(r.Keys(), r.TrustKeys()...))), slices.Sorted(maps.Keys(s.Data)), r)
		privateKeys := []string{ClientKeyKey}
		for _, ca := range r.KeyPairs() {
			privateKeys = append(privateKeys, KeyKey(ca))
		}
		for k, v := range s.Data {
			assert.NotEmpty(t, v, "%s: %s", r, k)
			if bytes.Contains(v, []byte("PRIVATE KEY")) {
				assert.Contains(t, privateKeys, k, "%s holds a private key under %s", r, k)
			}
		}
	}
	keys := func(r Reference) []string { return r.Keys() }
	for _, c := range []struct {
		r   Reference
		not []string
	}{
		// The root CA's key, and the server's own identity toward kcp, are in none of them.
		{ShardJoin, []string{"root-ca.key", "kcp-operator.crt", "kcp-operator.key"}},
		{FrontProxyJoin, []string{"root-ca.key", KeyKey(pki.ServiceAccountCA), KeyKey(pki.EtcdClientCA), KeyKey(pki.EtcdPeerCA), RootCAKey}},
		{KubeconfigIssuer, []string{KeyKey(pki.ServerCA), KeyKey(pki.ClientCA), KeyKey(pki.RequestHeaderClientCA), KeyKey(pki.ServiceAccountCA),
			KeyKey(pki.EtcdClientCA), KeyKey(pki.EtcdPeerCA), ClientCABundleKey}},
	} {
		for _, k := range c.not {
			assert.NotContains(t, keys(c.r), k, c.r)
		}
	}
}

// Each key holds what its consumer would otherwise read from the RootShard's namespace.
func TestRootShardSecretsComeFromTheirSources(t *testing.T) {
	rs := testRootShard()
	cas := testCAs(rs)
	secrets, err := ForRootShard(rs, cas)
	require.NoError(t, err)
	mergedClientCA := rootshard.MergedClientCA(rs, cas.Bundles).Data["tls.crt"]
	mergedCABundle := rootshard.MergedCABundle(rs, cas.Bundles).Data["tls.crt"]
	for i, r := range RootShardReferences {
		s := secrets[i]
		assert.Equal(t, r.Type(), *s.Type)
		assert.Equal(t, map[string]string{
			pki.LabelManagedBy: pki.ManagedBy, pki.LabelInstance: "root", pki.LabelComponent: string(r),
			pki.OwnerLabel(rootshard.Kind): "root", Label: string(r),
		}, s.Labels, "the owner label deletes it with the RootShard; the reference label selects it")
		for _, ca := range r.KeyPairs() {
			assert.Equal(t, cas.KeyPairs[ca].Cert, s.Data[CertKey(ca)], "%s: %s as cert-manager wrote it", r, ca)
			assert.Equal(t, cas.KeyPairs[ca].Key, s.Data[KeyKey(ca)], "%s: %s", r, ca)
		}
		assert.Equal(t, "https://root-kcp.team-a.svc.cluster.local:6443", string(s.Data[RootShardURLKey]), r)
		assert.Equal(t, mergedCABundle, s.Data[ServerCABundleKey], r)
		if _, ok := s.Data[ClientCABundleKey]; ok {
			assert.Equal(t, mergedClientCA, s.Data[ClientCABundleKey], r)
		}
	}
	assert.Equal(t, cas.RootCA, secrets[0].Data[RootCAKey])
	assert.Equal(t, "https://kcp.example.com:6443", string(secrets[0].Data[ExternalURLKey]))
	assert.Equal(t, "https://kcp.internal.example.com:8443", string(secrets[0].Data[ExternalAdminURLKey]))
}

func TestRootShardSecretsWaitForEveryCA(t *testing.T) {
	rs := testRootShard()
	cas := testCAs(rs)
	delete(cas.KeyPairs, pki.EtcdPeerCA)
	_, err := ForRootShard(rs, cas)
	require.ErrorContains(t, err, "root-etcd-peer-ca")

	cas = testCAs(rs)
	cas.KeyPairs[pki.ServerCA] = KeyPair{Cert: cas.KeyPairs[pki.ServerCA].Cert}
	_, err = ForRootShard(rs, cas)
	require.ErrorContains(t, err, "root-server-ca", "a CA without its key is not issued")

	cas = testCAs(rs)
	cas.RootCA = nil
	_, err = ForRootShard(rs, cas)
	require.ErrorContains(t, err, "root-ca")
}

func TestCacheServerSecret(t *testing.T) {
	s := testCacheSecret()
	assert.Equal(t, "cache-cache-client", *s.Name)
	assert.Equal(t, corev1.SecretType("operator.kcp.io/cache-client"), *s.Type)
	assert.Equal(t, "cache", s.Labels[pki.OwnerLabel(cacheserver.Kind)])
	assert.Equal(t, "cache-client", s.Labels[Label])
	assert.Equal(t, testCacheServer().URL(), string(s.Data[CacheURLKey]))
}

func TestRedactionHidesKeys(t *testing.T) {
	s := golden.RedactedSecret(testCacheSecret())
	assert.Nil(t, s.Data)
	assert.Equal(t, fmt.Sprintf("<redacted %d bytes>", len(pemOf("PRIVATE KEY", "cache-client-certificate"))), s.StringData[ClientKeyKey])
	assert.Contains(t, s.StringData[CACertKey], "CERTIFICATE sha256:")
	assert.NotContains(t, s.StringData[CACertKey], "cache-ca")
}
