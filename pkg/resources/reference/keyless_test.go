package reference_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/reference/referencetest"
)

// TestResolveKeyless: a copy without its CA keys resolves keyless, under a prefix and a type
// of the caller's, and Join then writes no CA Secret and no Issuer; the same copy is refused
// by Resolve, which needs the keys.
func TestResolveKeyless(t *testing.T) {
	copies := referencetest.Copies(t, referencetest.CAs(t), "b")
	const typ corev1.SecretType = "example.com/keyless"
	for _, r := range []reference.Reference{reference.ShardJoin, reference.FrontProxyJoin, reference.KubeconfigIssuer} {
		t.Run(string(r), func(t *testing.T) {
			s := &corev1.Secret{Type: typ, Data: map[string][]byte{}}
			s.Namespace, s.Name = "b", "keyless"
			for k, v := range copies[r].Data {
				s.Data["p."+k] = v
			}
			for _, ca := range r.KeyPairs() {
				delete(s.Data, "p."+reference.KeyKey(ca))
			}
			res, err := reference.ResolveKeyless(s, typ, r, "p.")
			require.NoError(t, err)
			for ca, pair := range res.CAs {
				assert.Empty(t, pair.PEM.Key, ca)
				assert.NotNil(t, pair.Cert, ca)
			}
			j := reference.Join("shard", "b", "eu", res)
			assert.Empty(t, j.Issuers)
			for _, sec := range j.Secrets {
				assert.NotEqual(t, corev1.SecretTypeTLS, *sec.Type, *sec.Name)
			}

			withKeys := copies[r].DeepCopy()
			for _, ca := range r.KeyPairs() {
				delete(withKeys.Data, reference.KeyKey(ca))
			}
			_, err = reference.Resolve(withKeys, r)
			assert.ErrorIs(t, err, reference.ErrMissingKey, "Resolve needs the keys")
		})
	}
	_, err := reference.ResolveKeyless(copies[reference.CacheClient], reference.CacheClient.Type(), reference.CacheClient, "")
	assert.Error(t, err, "a cache-client holds a client key: it has no keyless form")
	assert.NotContains(t, reference.ShardJoin.KeylessKeys(), "server-ca.key")
	assert.Contains(t, reference.ShardJoin.KeylessKeys(), "server-ca.crt")
}
