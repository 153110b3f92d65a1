package rootshard

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
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
	clienttesting "k8s.io/client-go/testing"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
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
		require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
		f.Host.CatchUpDeletes(t)
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

// signingMount is the Secret the root shard's Deployment signs its tokens with, and the
// Secret mounted at its own --service-account-key-file of the trust.
func (f *fixture) signingMount(t *testing.T) (signing string, trusted bool) {
	obj, exists, err := f.Host.Caches["deployments"].GetByKey("team-a/root-kcp")
	require.NoError(t, err)
	require.True(t, exists)
	pod := obj.(*appsv1.Deployment).Spec.Template.Spec
	for _, v := range pod.Volumes {
		switch {
		case v.Secret == nil:
		case v.Name == "service-account":
			signing = v.Secret.SecretName
		case v.Name == "service-account-trust":
			trusted = v.Secret.SecretName == "root-service-account-trust" &&
				slices.Contains(pod.Containers[0].Args, "--service-account-key-file=/etc/kcp/tls/service-account-trust/tls.crt")
		}
	}
	return signing, trusted
}

// addShardKeys puts the Secrets of shard-1's signing leaf slots and of its trust (written by
// the Shard's controller, which does not run here) into the host.
func (f *fixture) addShardKeys(t *testing.T, name string, cert []byte) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name,
		Labels: pki.Labels("shard", "shard-1", "service-account")}, Data: map[string][]byte{"tls.crt": cert}}
	if strings.HasSuffix(name, pki.TrustSuffix) {
		s.Labels = pki.Labels("shard", "shard-1", "service-account-trust")
	}
	if !strings.HasSuffix(name, pki.TrustSuffix) {
		// The slot's Certificate, which its old slot's deletion finds the Shard's.
		require.NoError(t, f.Host.Caches["certificates"].Update(&cmv1.Certificate{ObjectMeta: s.ObjectMeta}))
	}
	require.NoError(t, f.Host.Caches["secrets"].Update(s))
}

// A rotation of the service-account CA brings each shard's new signing key in its leaf's
// other slot, from Start, while the old one keeps signing; the shards sign with the new slot
// only once every shard's new key is issued, every <shard>-service-account-trust holds both
// keys and every verifier is settled; then the rotation is Prepared; Complete drops the old
// key from the trust and deletes the old slot.
func TestServiceAccountKeyRotationSwitchesSigningOnceEveryVerifierHasBothKeys(t *testing.T) {
	f := newFixture(t, testRootShard())
	sh := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shard-1"},
		Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}}}
	meta.SetStatusCondition(&sh.Status.Conditions, metav1.Condition{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "Available"})
	shardOld, shardNew := signingLeaf(t, "shard-1-old"), signingLeaf(t, "shard-1-new")
	f.Add(t, sh)
	f.addShardKeys(t, "shard-1-service-account", shardOld)
	old := signingLeaf(t, "old")
	f.issueLeaf(t, old)
	f.converge(t)
	f.setRotation(t, operatorv1alpha1.CARotationState{Authority: string(pki.ServiceAccountCA), Phase: operatorv1alpha1.CARotationPreparing, Slot: 1})
	saRotation := func(rs *operatorv1alpha1.RootShard) operatorv1alpha1.CARotationState {
		return *pki.RotationOf(rs.Status.Rotations, string(pki.ServiceAccountCA))
	}

	// Start: the root shard's new slot is issued (by the fake cert-manager), the old one signs.
	rs := f.syncs(t, 5)
	next := f.Host.Secret(t, "team-a", "root-service-account-next").Data["tls.crt"]
	assert.Equal(t, [][]byte{old, next}, certificatesOf(f.Host.Secret(t, "team-a", "root-service-account-trust").Data["tls.crt"]),
		"both keys are trusted before the new one signs")
	signing, trusted := f.signingMount(t)
	assert.Equal(t, "root-service-account", signing, "the old leaf keeps signing")
	assert.True(t, trusted, "the root shard verifies its own tokens by both keys")
	assert.False(t, saRotation(rs).LeavesSwitched, "held while shard-1's new key is not issued")

	// shard-1's new key is issued, but its trust does not hold it yet.
	f.addShardKeys(t, "shard-1-service-account-next", shardNew)
	f.addShardKeys(t, "shard-1-service-account-trust", shardOld)
	rs = f.syncs(t, 3)
	assert.False(t, saRotation(rs).LeavesSwitched, "held while shard-1-service-account-trust lacks the new key")

	// Its trust holds both, but the Shard is rolling onto it.
	f.addShardKeys(t, "shard-1-service-account-trust", certificates.Bundle(shardOld, shardNew))
	meta.SetStatusCondition(&sh.Status.Conditions, metav1.Condition{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionFalse, Reason: "Rolling"})
	require.NoError(t, f.Caches.Shards.Update(sh))
	rs = f.syncs(t, 3)
	assert.False(t, saRotation(rs).LeavesSwitched, "held while a verifier is not settled")
	signing, _ = f.signingMount(t)
	assert.Equal(t, "root-service-account", signing)

	meta.SetStatusCondition(&sh.Status.Conditions, metav1.Condition{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "Available"})
	require.NoError(t, f.Caches.Shards.Update(sh))
	rs = f.syncs(t, 1)
	require.True(t, saRotation(rs).LeavesSwitched, "every verifier is settled with both keys")
	assert.Equal(t, operatorv1alpha1.CARotationPreparing, saRotation(rs).Phase, "not Prepared before the shards roll onto the new key")
	rs = f.syncs(t, 3)
	signing, _ = f.signingMount(t)
	assert.Equal(t, "root-service-account-next", signing, "the root shard signs with the new slot")
	require.Equal(t, operatorv1alpha1.CARotationPrepared, saRotation(rs).Phase)
	assert.Equal(t, [][]byte{old, next}, certificatesOf(f.Host.Secret(t, "team-a", "root-service-account-trust").Data["tls.crt"]),
		"both keys verify while the rotation is Prepared")

	completing := saRotation(rs)
	completing.Phase = operatorv1alpha1.CARotationCompleting
	f.setRotation(t, completing)
	rs = f.syncs(t, 3)
	require.Equal(t, operatorv1alpha1.CARotationCompleted, saRotation(rs).Phase)
	assert.Equal(t, [][]byte{next}, certificatesOf(f.Host.Secret(t, "team-a", "root-service-account-trust").Data["tls.crt"]),
		"the old key is dropped at Complete")
	deleted := map[string]bool{}
	for _, a := range slices.Concat(f.Host.Kube.Actions(), f.Host.CM.Actions()) {
		if d, ok := a.(clienttesting.DeleteAction); ok {
			deleted[d.GetResource().Resource+"/"+d.GetName()] = true
		}
	}
	for _, name := range []string{"root-service-account", "shard-1-service-account"} {
		assert.True(t, deleted["certificates/"+name] && deleted["secrets/"+name], "the old slot %s is deleted: %v", name, deleted)
	}
	assert.False(t, deleted["secrets/root-service-account-next"] || deleted["secrets/shard-1-service-account-next"], "the new slots stay")
	signing, _ = f.signingMount(t)
	assert.Equal(t, "root-service-account-next", signing)
}

// A FrontProxy that never becomes Available holds a rotation in Preparing, and the condition
// names it; a rotation that excludes it, and one started before it was created, do not wait
// for it. Its VirtualWorkspace and Shard peers are the same members.
func TestARotationNamesAndSkipsTheMembersItWaitsFor(t *testing.T) {
	start := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	initiated := metav1.NewTime(start)
	stalled := metav1.Condition{Type: operatorv1alpha1.ConditionAvailable, Status: metav1.ConditionFalse, Reason: "Unavailable",
		Message: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector"}
	tests := []struct {
		name     string
		created  time.Time
		excluded []operatorv1alpha1.CARotationMember
		waits    bool
	}{
		{name: "a member created before Start is waited for", created: start.Add(-time.Hour), waits: true},
		{name: "a member created in Start's second is waited for", created: start, waits: true},
		{name: "an excluded member is not", created: start.Add(-time.Hour),
			excluded: []operatorv1alpha1.CARotationMember{{Kind: "FrontProxy", Name: "fp"}}},
		{name: "a member of another kind by that name is no exclusion", created: start.Add(-time.Hour), waits: true,
			excluded: []operatorv1alpha1.CARotationMember{{Kind: "Shard", Name: "fp"}}},
		{name: "a member created after Start is not", created: start.Add(time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, testRootShard())
			fp := &operatorv1alpha1.FrontProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "fp", CreationTimestamp: metav1.NewTime(tt.created)},
				Spec: operatorv1alpha1.FrontProxySpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}}}
			meta.SetStatusCondition(&fp.Status.Conditions, stalled)
			f.Add(t, fp)
			f.converge(t)
			f.setRotation(t, operatorv1alpha1.CARotationState{Authority: string(pki.ClientCA), Phase: operatorv1alpha1.CARotationPreparing, Slot: 1,
				LastInitiationTime: &initiated, ExcludedMembers: tt.excluded})

			rs := f.syncs(t, 6)
			st := pki.RotationOf(rs.Status.Rotations, string(pki.ClientCA))
			cond := meta.FindStatusCondition(rs.Status.Conditions, operatorv1alpha1.ConditionCARotation)
			require.NotNil(t, cond)
			if !tt.waits {
				assert.Equal(t, operatorv1alpha1.CARotationPrepared, st.Phase, "condition: %s", cond.Message)
				return
			}
			assert.Equal(t, operatorv1alpha1.CARotationPreparing, st.Phase)
			assert.False(t, st.LeavesSwitched, "held while the FrontProxy is not available")
			assert.Equal(t, "rotating the CAs client (Preparing, waiting for FrontProxy team-a/fp (Available=False, Unavailable: "+
				"0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector))", cond.Message)
		})
	}
}
