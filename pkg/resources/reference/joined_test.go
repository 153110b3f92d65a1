package reference_test

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/reference/referencetest"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// What a consumer writes from a copy: its local CAs, each the key pair received behind an
// Issuer of the same name, and certificates alone everywhere else, all owned by it; and the
// RootShard it realizes against has the copy's URLs.
func TestJoin(t *testing.T) {
	cas := referencetest.CAs(t)
	copies := referencetest.Copies(t, cas, "b")
	for _, c := range []struct {
		r     reference.Reference
		kind  string
		names []string
	}{
		{reference.ShardJoin, shard.Kind, []string{
			"eu-shard-root-ca", "eu-shard-root-client-ca", "eu-shard-root-etcd-client-ca", "eu-shard-root-etcd-client-trust",
			"eu-shard-root-etcd-peer-ca", "eu-shard-root-etcd-peer-trust", "eu-shard-root-front-proxy-client-ca",
			"eu-shard-root-merged-ca-bundle", "eu-shard-root-merged-client-ca", "eu-shard-root-requestheader-client-ca",
			"eu-shard-root-requestheader-client-ca-trust", "eu-shard-root-server-ca", "eu-shard-root-server-ca-trust",
			"eu-shard-root-service-account-ca"}},
		{reference.FrontProxyJoin, "frontproxy", []string{
			"eu-front-proxy-root-client-ca", "eu-front-proxy-root-front-proxy-client-ca", "eu-front-proxy-root-merged-ca-bundle",
			"eu-front-proxy-root-merged-client-ca", "eu-front-proxy-root-requestheader-client-ca",
			"eu-front-proxy-root-requestheader-client-ca-trust", "eu-front-proxy-root-server-ca", "eu-front-proxy-root-server-ca-trust"}},
		{reference.KubeconfigIssuer, "kubeconfig", []string{
			"eu-kubeconfig-root-front-proxy-client-ca", "eu-kubeconfig-root-merged-ca-bundle"}},
	} {
		t.Run(string(c.r), func(t *testing.T) {
			resolved, err := reference.Resolve(copies[c.r], c.r)
			require.NoError(t, err)
			j := reference.Join(c.kind, "b", "eu", resolved)

			rs := j.RootShard
			assert.Equal(t, reference.JoinedName(c.kind, "eu"), rs.Name)
			assert.Equal(t, "b", rs.Namespace)
			assert.Equal(t, resolved.RootShardURL.String(), rootshard.Server(rs).BaseURL())
			assert.Equal(t, resolved.ExternalURL.String(), kcp.Server{RootShard: rs}.ExternalURL())

			var names []string
			keyPairs := map[string]bool{}
			for _, ca := range c.r.KeyPairs() {
				keyPairs[pki.CAName(rs.Name, ca)] = true
			}
			for _, s := range j.Secrets {
				names = append(names, *s.Name)
				assert.Equal(t, "b", *s.Namespace)
				assert.Equal(t, "eu", s.Labels[pki.OwnerLabel(c.kind)], "%s is owned by its consumer", *s.Name)
				assert.NotContains(t, s.Labels, reference.Label, "%s is not a reference Secret", *s.Name)
				hasKey := bytes.Contains(s.Data[corev1.TLSPrivateKeyKey], []byte("PRIVATE KEY"))
				if keyPairs[*s.Name] {
					assert.Equal(t, corev1.SecretTypeTLS, *s.Type)
					assert.True(t, hasKey, "%s holds its CA's key", *s.Name)
					continue
				}
				assert.False(t, hasKey, "%s holds no key", *s.Name)
				for k, v := range s.Data {
					assert.NotContains(t, string(v), "PRIVATE KEY", "%s: %s", *s.Name, k)
				}
			}
			slices.Sort(names)
			assert.Equal(t, c.names, names)

			var issuers []string
			for _, i := range j.Issuers {
				issuers = append(issuers, *i.Name)
				assert.True(t, keyPairs[*i.Spec.CA.SecretName], "Issuer %s is backed by a received key pair", *i.Name)
			}
			assert.Len(t, issuers, len(c.r.KeyPairs()))
		})
	}
}

// A managed etcd of a joined shard trusts each etcd CA alone, not the chain's root.
func TestJoinEtcdTrust(t *testing.T) {
	cas := referencetest.CAs(t)
	resolved, err := reference.Resolve(referencetest.Copies(t, cas, "b")[reference.ShardJoin], reference.ShardJoin)
	require.NoError(t, err)
	j := reference.Join(shard.Kind, "b", "eu", resolved)
	for _, c := range []struct {
		name string
		ca   pki.CA
	}{{"eu-shard-root-etcd-client-trust", pki.EtcdClientCA}, {"eu-shard-root-etcd-peer-trust", pki.EtcdPeerCA}} {
		i := slices.IndexFunc(j.Secrets, func(s *corev1ac.SecretApplyConfiguration) bool { return *s.Name == c.name })
		require.NotEqual(t, -1, i, c.name)
		block, rest := pem.Decode(j.Secrets[i].Data["tls.crt"])
		require.NotNil(t, block)
		assert.Empty(t, bytes.TrimSpace(rest), "%s holds one certificate", c.name)
		cert, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		assert.Equal(t, resolved.CAs[c.ca].Cert.Raw, cert.Raw)
	}
}

// secretData is the data of the Secret name among secrets.
func secretData(t *testing.T, secrets []*corev1ac.SecretApplyConfiguration, name string) map[string][]byte {
	t.Helper()
	i := slices.IndexFunc(secrets, func(s *corev1ac.SecretApplyConfiguration) bool { return *s.Name == name })
	require.NotEqual(t, -1, i, "no Secret %s", name)
	return secrets[i].Data
}

// subjects are the common names of the PEM certificates of bundle, in order.
func subjects(t *testing.T, bundle []byte) []string {
	t.Helper()
	var out []string
	for block, rest := pem.Decode(bundle); block != nil; block, rest = pem.Decode(rest) {
		c, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		out = append(out, c.Subject.CommonName)
	}
	return out
}

// A copy refreshed while the RootShard rotates its server, request-header and etcd client CAs carries
// both CAs of each; Join writes them into <joined>-<ca>-trust, which the joined pods mount
// where they trust the CA, while the local Issuer signs from the key pair received.
func TestJoinTrustsBothSlotsOfARotatingCA(t *testing.T) {
	cas := referencetest.CAs(t)
	cas.Trust = map[pki.CA][]byte{}
	for _, ca := range []pki.CA{pki.ServerCA, pki.RequestHeaderClientCA, pki.EtcdClientCA} {
		own, err := pki.FirstCertificate(cas.KeyPairs[ca].Cert)
		require.NoError(t, err)
		next, _ := credentialstest.NewCA(t, string(ca)+"-next")
		cas.Trust[ca] = append(own, next...)
	}
	copies := referencetest.Copies(t, cas, "b")
	for _, c := range []struct {
		r       reference.Reference
		kind    string
		mounted func(rs *operatorv1alpha1.RootShard) []string
	}{
		{reference.ShardJoin, shard.Kind, func(rs *operatorv1alpha1.RootShard) []string {
			return shard.Server(&operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "b"}}, rs).MountedSecrets()
		}},
		{reference.FrontProxyJoin, "frontproxy", func(rs *operatorv1alpha1.RootShard) []string {
			return workload.Secrets(frontproxy.FrontProxy{FrontProxy: &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "b"}}, RootShard: rs}.Mounts(), workload.AnySecret)
		}},
	} {
		t.Run(string(c.r), func(t *testing.T) {
			resolved, err := reference.Resolve(copies[c.r], c.r)
			require.NoError(t, err)
			j := reference.Join(c.kind, "b", "eu", resolved)
			mounted := c.mounted(j.RootShard)
			// Every CA Secret of the joined RootShard the pods mount is one Join writes.
			for _, name := range mounted {
				for _, ca := range pki.IntermediateCAs {
					if strings.HasPrefix(name, pki.CAName(j.RootShard.Name, ca)) {
						assert.True(t, slices.ContainsFunc(j.Secrets, func(s *corev1ac.SecretApplyConfiguration) bool { return *s.Name == name }),
							"the pods mount %s, which Join writes", name)
					}
				}
			}
			for _, ca := range []pki.CA{pki.ServerCA, pki.RequestHeaderClientCA} {
				local := pki.CAName(j.RootShard.Name, ca)
				assert.Equal(t, []string{string(ca), string(ca) + "-next"}, subjects(t, secretData(t, j.Secrets, local+"-trust")[corev1.TLSCertKey]),
					"%s-trust: both CAs", local)
				assert.Equal(t, cas.KeyPairs[ca].Cert, secretData(t, j.Secrets, local)[corev1.TLSCertKey], "%s: the key pair received", local)
				assert.Contains(t, mounted, local+"-trust", "the pods trust %s by its trust bundle", ca)
				assert.NotContains(t, mounted, local, "no pod mounts the Issuer's key pair Secret")
			}
			if c.r == reference.ShardJoin {
				assert.Equal(t, []string{string(pki.EtcdClientCA), string(pki.EtcdClientCA) + "-next"},
					subjects(t, secretData(t, j.Secrets, "eu-shard-root-etcd-client-trust")[corev1.TLSCertKey]), "a managed etcd trusts both too")
			}
		})
	}
}

// A copy made before the reference Secrets carried the trust bundles still joins: each CA
// is trusted alone, as a copy of a RootShard that never rotated it says.
func TestJoinOfACopyWithoutTrustBundles(t *testing.T) {
	cas := referencetest.CAs(t)
	copies := referencetest.Copies(t, cas, "b")
	for _, c := range []struct {
		r    reference.Reference
		kind string
	}{{reference.ShardJoin, shard.Kind}, {reference.FrontProxyJoin, "frontproxy"}} {
		current, err := reference.Resolve(copies[c.r], c.r)
		require.NoError(t, err)
		old := copies[c.r].DeepCopy()
		for _, k := range c.r.TrustKeys() {
			delete(old.Data, k)
		}
		resolved, err := reference.Resolve(old, c.r)
		require.NoError(t, err, c.r)
		j, want := reference.Join(c.kind, "b", "eu", resolved), reference.Join(c.kind, "b", "eu", current)
		assert.Equal(t, want, j, "%s: an old copy writes what a current copy of a CA that never rotated writes", c.r)
		for _, ca := range []pki.CA{pki.ServerCA, pki.RequestHeaderClientCA} {
			assert.Equal(t, []string{string(ca)}, subjects(t, secretData(t, j.Secrets, pki.CAName(j.RootShard.Name, ca)+"-trust")[corev1.TLSCertKey]), c.r)
		}
	}
}
