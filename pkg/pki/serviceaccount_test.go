package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// certOf is a certificate of key, serial telling its renewals apart.
func certOf(t *testing.T, key *ecdsa.PrivateKey, serial int64) []byte {
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "root-service-account"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(0, 0).Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestServiceAccountKeys(t *testing.T) {
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		return k
	}
	oldKey, newerKey := newKey(), newKey()
	old, renewed, next := certOf(t, oldKey, 1), certOf(t, oldKey, 2), certOf(t, newerKey, 3)
	ca := certOf(t, newKey(), 4)
	join := func(pems ...[]byte) []byte {
		var out []byte
		for _, p := range pems {
			out = append(out, p...)
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		previous []byte
		leaf     []byte
		rotating bool
		want     []byte
	}{
		{"first write", nil, join(old, ca), true, old},
		{"the leaf issued again keeps the old key first", old, next, true, join(old, next)},
		{"unchanged", join(old, next), next, true, join(old, next)},
		{"a renewal with the same key takes its place", join(next, old), renewed, true, join(next, renewed)},
		{"completed: the current key alone", join(old, next), next, false, next},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ServiceAccountKeys(tc.previous, tc.leaf, tc.rotating)
			require.NoError(t, err)
			assert.Equal(t, string(tc.want), string(got))
			assert.True(t, HoldsServiceAccountKey(got, tc.leaf))
		})
	}
	assert.False(t, HoldsServiceAccountKey(old, next))
	_, err := ServiceAccountKeys(nil, []byte("no certificate"), true)
	assert.Error(t, err)
}
