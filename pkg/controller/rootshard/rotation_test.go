package rootshard

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// signingLeaf is a certificate of a new key, standing in for the service-account leaf that
// cert-manager issues: the fake host's certificates are not X.509, and the keys bundle is
// made of public keys. Its key is dropped: only its public half matters here.
func signingLeaf(t *testing.T, name string) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(0, 0).Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// issueLeaf plays cert-manager issuing the root shard's service-account leaf with cert.
func (f *fixture) issueLeaf(t *testing.T, cert []byte) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root-service-account",
		Labels: pki.Labels("rootshard", "root", "service-account")},
		Data: map[string][]byte{"tls.crt": cert, "tls.key": []byte("not a key")}}
	require.NoError(t, f.Host.Caches["secrets"].Update(s))
}

// syncs syncs the RootShard n times, the host catching up in between.
func (f *fixture) syncs(t *testing.T, n int) *operatorv1alpha1.RootShard {
	for range n {
		require.NoError(t, f.c.sync(t.Context(), "team-a/root"))
		f.hostCatchesUp(t)
	}
	return f.Stored(t, "team-a", "root")
}

// setRotation sets the rotation of the RootShard as the rotation subresource would.
func (f *fixture) setRotation(t *testing.T, st operatorv1alpha1.CARotationState) {
	rs := f.Stored(t, "team-a", "root").DeepCopy()
	rs.Status.Rotations = []operatorv1alpha1.CARotationState{st}
	_, err := f.Ours.OperatorV1alpha1().RootShards("team-a").UpdateStatus(t.Context(), rs, metav1.UpdateOptions{})
	require.NoError(t, err)
	f.Stored(t, "team-a", "root")
}

// certificatesOf are the certificates of a PEM bundle, in order.
func certificatesOf(bundle []byte) [][]byte {
	var out [][]byte
	for rest := bundle; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return out
		}
		out = append(out, pem.EncodeToMemory(block))
	}
}

// A rotation of the service-account CA keeps the old signing key verifiable until Complete:
// <rs>-service-account-trust holds the old key before the leaf is issued again (its
// Preparing step waits for that), both keys once it is, until Prepared, and the new key
// alone once Completed; the pods verify the tokens by it from the rotation's start.
func TestServiceAccountKeysOfARotation(t *testing.T) {
	f := newFixture(t, testRootShard())
	old, next := signingLeaf(t, "old"), signingLeaf(t, "new")
	f.issueLeaf(t, old)
	f.converge(t)
	f.setRotation(t, operatorv1alpha1.CARotationState{Authority: string(pki.ServiceAccountCA), Phase: operatorv1alpha1.CARotationPreparing, Slot: 1})

	rs := f.syncs(t, 5)
	assert.Equal(t, [][]byte{old}, certificatesOf(f.Host.Secret(t, "team-a", "root-service-account-trust").Data["tls.crt"]),
		"the old key is kept before the leaf is issued again")
	st := pki.RotationOf(rs.Status.Rotations, string(pki.ServiceAccountCA))
	require.True(t, st.LeavesSwitched, "the leaves switch during Start, once the old key is kept")

	obj, exists, err := f.Host.Caches["deployments"].GetByKey("team-a/root-kcp")
	require.NoError(t, err)
	require.True(t, exists)
	pod := obj.(*appsv1.Deployment).Spec.Template.Spec
	var keyFiles []string
	for _, arg := range pod.Containers[0].Args {
		if file, ok := strings.CutPrefix(arg, "--service-account-key-file="); ok {
			keyFiles = append(keyFiles, file)
		}
	}
	assert.Len(t, keyFiles, 2, "its own leaf's key, and the keys kept: %v", keyFiles)
	assert.True(t, slices.ContainsFunc(keyFiles, func(f string) bool { return strings.Contains(f, "/service-account-trust/") }))
	assert.True(t, slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
		return v.Secret != nil && v.Secret.SecretName == "root-service-account-trust"
	}), "the pods mount the keys kept")

	// cert-manager issues the leaf again, with a new key.
	f.issueLeaf(t, next)
	rs = f.syncs(t, 3)
	assert.Equal(t, [][]byte{old, next}, certificatesOf(f.Host.Secret(t, "team-a", "root-service-account-trust").Data["tls.crt"]),
		"both keys verify while the rotation is prepared")
	require.Equal(t, operatorv1alpha1.CARotationPrepared, pki.RotationOf(rs.Status.Rotations, string(pki.ServiceAccountCA)).Phase)

	completing := *pki.RotationOf(rs.Status.Rotations, string(pki.ServiceAccountCA))
	completing.Phase = operatorv1alpha1.CARotationCompleting
	f.setRotation(t, completing)
	rs = f.syncs(t, 3)
	require.Equal(t, operatorv1alpha1.CARotationCompleted, pki.RotationOf(rs.Status.Rotations, string(pki.ServiceAccountCA)).Phase)
	assert.Equal(t, [][]byte{next}, certificatesOf(f.Host.Secret(t, "team-a", "root-service-account-trust").Data["tls.crt"]),
		"the old key is dropped at Complete")
}

// A VirtualWorkspace of the RootShard mounts its bundles too: a rotation is not Prepared
// until it is available again.
func TestARotationWaitsForTheVirtualWorkspaces(t *testing.T) {
	f := newFixture(t, testRootShard())
	vw := &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "vw"},
		Spec: operatorv1alpha1.VirtualWorkspaceSpec{Target: operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: &corev1.LocalObjectReference{Name: "root"}}}}
	meta.SetStatusCondition(&vw.Status.Conditions, metav1.Condition{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionFalse, Reason: "Rolling"})
	f.Add(t, vw)
	f.converge(t)
	f.setRotation(t, operatorv1alpha1.CARotationState{Authority: string(pki.ClientCA), Phase: operatorv1alpha1.CARotationPreparing, Slot: 1})

	rs := f.syncs(t, 5)
	st := pki.RotationOf(rs.Status.Rotations, string(pki.ClientCA))
	assert.Equal(t, operatorv1alpha1.CARotationPreparing, st.Phase)
	assert.False(t, st.LeavesSwitched, "held while the VirtualWorkspace is not available")

	meta.SetStatusCondition(&vw.Status.Conditions, metav1.Condition{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "Available"})
	require.NoError(t, f.Caches.VirtualWorkspaces.Update(vw))
	rs = f.syncs(t, 5)
	assert.Equal(t, operatorv1alpha1.CARotationPrepared, pki.RotationOf(rs.Status.Rotations, string(pki.ClientCA)).Phase)
}

// The service-account leaves are not issued again before every shard's
// <shard>-service-account-trust holds its current key: the Shard's controller writes its
// own, and until it did, the old key would be lost.
func TestServiceAccountLeavesWaitForEveryShardsKeys(t *testing.T) {
	f := newFixture(t, testRootShard())
	s := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shard-1"},
		Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}}}
	meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "Available"})
	shardLeaf := signingLeaf(t, "shard-1")
	f.Add(t, s, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shard-1-service-account",
		Labels: pki.Labels("shard", "shard-1", "service-account")}, Data: map[string][]byte{"tls.crt": shardLeaf}})
	f.issueLeaf(t, signingLeaf(t, "root"))
	f.converge(t)
	f.setRotation(t, operatorv1alpha1.CARotationState{Authority: string(pki.ServiceAccountCA), Phase: operatorv1alpha1.CARotationPreparing, Slot: 1})

	rs := f.syncs(t, 5)
	assert.False(t, pki.RotationOf(rs.Status.Rotations, string(pki.ServiceAccountCA)).LeavesSwitched,
		"held while shard-1-service-account-trust does not hold the Shard's key")

	f.Add(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shard-1-service-account-trust",
		Labels: pki.Labels("shard", "shard-1", "service-account-trust")}, Data: map[string][]byte{"tls.crt": shardLeaf}})
	rs = f.syncs(t, 2)
	assert.True(t, pki.RotationOf(rs.Status.Rotations, string(pki.ServiceAccountCA)).LeavesSwitched)
}
