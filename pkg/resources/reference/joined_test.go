package reference_test

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/reference/referencetest"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
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
			"eu-shard-root-server-ca", "eu-shard-root-service-account-ca"}},
		{reference.FrontProxyJoin, "frontproxy", []string{
			"eu-front-proxy-root-client-ca", "eu-front-proxy-root-front-proxy-client-ca", "eu-front-proxy-root-merged-ca-bundle",
			"eu-front-proxy-root-merged-client-ca", "eu-front-proxy-root-requestheader-client-ca", "eu-front-proxy-root-server-ca"}},
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
