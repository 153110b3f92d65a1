package shard

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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// TestShardKeepsItsServiceAccountKeysInARotation: while its RootShard's service-account CA
// rotates, a Shard has its new signing key issued in its leaf's other slot, writes
// <s>-service-account-trust with both keys, verifies its own tokens by it too, and its
// peers' by theirs, while it signs with the old slot.
func TestShardKeepsItsServiceAccountKeysInARotation(t *testing.T) {
	f := newFixture(t)
	f.addRootShard(t)
	obj, exists, err := f.Caches.RootShards.GetByKey("team-a/root")
	require.NoError(t, err)
	require.True(t, exists)
	rs := obj.(*operatorv1alpha1.RootShard).DeepCopy()
	rs.Status.Rotations = []operatorv1alpha1.CARotationState{{Authority: string(pki.ServiceAccountCA), Phase: operatorv1alpha1.CARotationPreparing, Slot: 1}}
	require.NoError(t, f.Caches.RootShards.Update(rs))
	s, err := f.Ours.OperatorV1alpha1().Shards("team-a").Get(t.Context(), "shard-1", metav1.GetOptions{})
	require.NoError(t, err)
	s.Spec.Auth = &operatorv1alpha1.AuthSpec{ServiceAccount: &operatorv1alpha1.ServiceAccountAuthentication{Enabled: true}}
	s, err = f.Ours.OperatorV1alpha1().Shards("team-a").Update(t.Context(), s, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, f.Caches.Shards.Update(s))

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "shard-1-service-account"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(0, 0).Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	leaf := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	own := serviceAccountSecret("shard-1", "shard")
	own.Data = map[string][]byte{"tls.crt": leaf}
	own.Labels[pki.LabelOwnerUID] = shardUID // the Shard's own, as cert-manager copies it from the Certificate
	rootKeys := serviceAccountSecret("root", "rootshard")
	rootKeys.Name = "root-service-account-trust"
	for _, secret := range []*corev1.Secret{own, rootKeys} {
		require.NoError(t, f.Host.Caches["secrets"].Add(secret))
	}
	for range 4 {
		f.sync(t)
		f.Host.CatchUp(t)
	}

	// The new slot, which the fake cert-manager issued, is trusted next to the old one.
	next := f.Host.Secret(t, "team-a", "shard-1-service-account-next").Data["tls.crt"]
	assert.Equal(t, string(leaf)+string(next), string(f.Host.Secret(t, "team-a", "shard-1-service-account-trust").Data["tls.crt"]))
	objs := f.Host.Caches["deployments"].List()
	require.Len(t, objs, 1)
	mounted := map[string]string{}
	pod := objs[0].(*appsv1.Deployment).Spec.Template.Spec
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			mounted[v.Name] = v.Secret.SecretName
		}
	}
	assert.Equal(t, "shard-1-service-account-trust", mounted["service-account-trust"], "its own keys kept")
	assert.Equal(t, "shard-1-service-account", mounted["service-account"], "it signs with its old slot until the leaves switch")
	assert.Equal(t, "root-service-account-trust", mounted["sa-root"], "the root shard's keys kept")
	assert.Contains(t, pod.Containers[0].Args, "--service-account-key-file=/etc/kcp/tls/service-account-trust/tls.crt")
}
