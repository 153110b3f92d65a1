package rootshard

import (
	"encoding/json"
	"encoding/pem"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

func TestReferenceSecretsFollowTheCAs(t *testing.T) {
	f := newFixture(t, testRootShard())
	f.converge(t)

	for _, r := range reference.RootShardReferences {
		s := f.Host.Secret(t, "team-a", r.Name("root"))
		assert.Equal(t, r.Type(), s.Type)
		assert.Equal(t, string(r), s.Labels[reference.Label])
		assert.Equal(t, "root", s.Labels[pki.OwnerLabel("rootshard")], "DeleteOwned removes it with the RootShard")
		for _, ca := range r.KeyPairs() {
			assert.Equal(t, f.Host.Secret(t, "team-a", pki.CAName("root", ca)).Data["tls.crt"], s.Data[reference.CertKey(ca)], "%s: %s", r, ca)
			assert.Equal(t, f.Host.Secret(t, "team-a", pki.CAName("root", ca)).Data["tls.key"], s.Data[reference.KeyKey(ca)], "%s: %s", r, ca)
		}
	}
	assert.Equal(t, f.Host.Secret(t, "team-a", "root-ca").Data["tls.crt"], f.Host.Secret(t, "team-a", "root-shard-join").Data[reference.RootCAKey])

	// cert-manager rotates the etcd peer CA: only the shard-join Secret holds it.
	rotate(t, f, pki.EtcdPeerCA)
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
	writes := f.Writes()
	assert.Contains(t, writes, "Secret root-shard-join")
	assert.NotContains(t, writes, "Secret root-front-proxy-join")
	assert.NotContains(t, writes, "Secret root-kubeconfig-issuer")
	assert.Equal(t, f.Host.Secret(t, "team-a", "root-etcd-peer-ca").Data["tls.key"], f.Host.Secret(t, "team-a", "root-shard-join").Data["etcd-peer-ca.key"])
	f.hostCatchesUp(t)
	f.Reset()

	// And the front-proxy-client CA: the kubeconfig issuer's key pair, and the client CA
	// bundle the joining shards and front proxies trust.
	rotate(t, f, pki.FrontProxyClientCA)
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
	writes = f.Writes()
	for _, r := range reference.RootShardReferences {
		assert.Contains(t, writes, "Secret "+r.Name("root"))
	}
	assert.Equal(t, f.Host.Secret(t, "team-a", "root-front-proxy-client-ca").Data["tls.key"], f.Host.Secret(t, "team-a", "root-kubeconfig-issuer").Data["front-proxy-client-ca.key"])
	assert.Equal(t, f.Host.Secret(t, "team-a", "root-merged-client-ca").Data["tls.crt"], f.Host.Secret(t, "team-a", "root-shard-join").Data[reference.ClientCABundleKey])
}

// rotate plays cert-manager renewing a CA with a new key.
func rotate(t *testing.T, f *fixture, ca pki.CA) {
	t.Helper()
	s := f.Host.Secret(t, "team-a", pki.CAName("root", ca)).DeepCopy()
	s.ResourceVersion = "2"
	s.Data = map[string][]byte{
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("rotated " + s.Name)}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("rotated " + s.Name)}),
	}
	require.NoError(t, f.Host.Caches["secrets"].Update(s))
}

func TestNoReferenceSecretBeforeTheCAsAreIssued(t *testing.T) {
	f := newFixture(t, testRootShard())
	for range 3 {
		require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
		rs, err := f.Ours.OperatorV1alpha1().RootShards("team-a").Get(t.Context(), "root", metav1.GetOptions{})
		require.NoError(t, err)
		require.NoError(t, f.Caches.RootShards.Update(rs)) // the finalizer, without cert-manager
	}
	require.Contains(t, f.Writes(), "Certificate root-etcd-client-ca", "the RootShard was realized as far as it could be")
	for _, w := range f.Writes() {
		assert.NotContains(t, []string{"Secret root-shard-join", "Secret root-front-proxy-join", "Secret root-kubeconfig-issuer"}, w)
	}

	// Every CA but one is issued: still none.
	f.Host.CatchUp(t)
	require.NoError(t, f.Host.Caches["secrets"].Delete(f.Host.Secret(t, "team-a", "root-etcd-client-ca")))
	f.Reset()
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
	assert.NotContains(t, f.Writes(), "Secret root-shard-join")
}

// A RootShard whose root CA is the user's (caSecretRef) hands on that CA's certificate, and
// nothing of the user's Secret but it.
func TestReferenceSecretsOfAUsersRootCA(t *testing.T) {
	rs := testRootShard()
	rs.Spec.Certificates = &operatorv1alpha1.Certificates{CASecretRef: &corev1.LocalObjectReference{Name: "corp-ca"}}
	f := newFixture(t, rs)
	users := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("corp-ca")})
	_, err := f.Host.Kube.CoreV1().Secrets("team-a").Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "corp-ca", Namespace: "team-a"},
		Data:       map[string][]byte{"tls.crt": users, "tls.key": []byte("the user's root key")},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	f.converge(t)
	shardJoin := f.Host.Secret(t, "team-a", "root-shard-join")
	assert.Equal(t, users, shardJoin.Data[reference.RootCAKey])
	for k, v := range shardJoin.Data {
		assert.NotContains(t, string(v), "the user's root key", k)
	}
}

// The reference Secrets' contents never reach the RootShard's status or its Events.
func TestReferenceSecretsStayOutOfStatusAndEvents(t *testing.T) {
	f := newFixture(t, testRootShard())
	events := record.NewFakeRecorder(1000)
	f.c.Recorder = events
	f.converge(t)
	rotate(t, f, pki.ServerCA)
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))

	rs, err := f.Ours.OperatorV1alpha1().RootShards("team-a").Get(t.Context(), "root", metav1.GetOptions{})
	require.NoError(t, err)
	status, err := json.Marshal(rs.Status)
	require.NoError(t, err)
	var said []string
	for len(events.Events) > 0 {
		said = append(said, <-events.Events)
	}
	for _, text := range append(said, string(status)) {
		assert.NotContains(t, text, "PRIVATE KEY")
		assert.NotContains(t, text, "BEGIN")
	}
	require.True(t, slices.ContainsFunc(f.Writes(), func(w string) bool { return strings.HasPrefix(w, "Secret root-shard-join") }),
		"the rotation was applied, so the check above looked at a write")
}

// While the root CA rotates, what carries the root carries both slots, each with the chain
// above it, each certificate once: the pods' ca-root, now <rs>-ca-trust, and the reference
// Secrets' root-ca.crt.
func TestARotatingRootCAIsTrustedInBothSlots(t *testing.T) {
	rs := testRootShard()
	rs.Status.Rotations = []operatorv1alpha1.CARotationState{{Authority: pki.RootAuthority, Phase: operatorv1alpha1.CARotationPreparing, Slot: 1}}
	f := newFixture(t, rs)
	for range 5 {
		require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
		f.hostCatchesUp(t)
	}
	old := f.Host.Secret(t, "team-a", "root-ca").Data["tls.crt"]
	next := f.Host.Secret(t, "team-a", "root-ca-next").Data["tls.crt"]
	require.NotEqual(t, old, next)
	trust := f.Host.Secret(t, "team-a", "root-ca-trust").Data["tls.crt"]
	for _, chain := range [][]byte{old, next} {
		block, _ := pem.Decode(chain)
		require.NotNil(t, block)
		assert.Contains(t, string(trust), string(pem.EncodeToMemory(block)), "the trust bundle carries each slot")
	}
	assert.Equal(t, trust, f.Host.Secret(t, "team-a", "root-shard-join").Data[reference.RootCAKey], "the reference carries what the pods trust")
	obj, exists, err := f.Host.Caches["deployments"].GetByKey("team-a/root-kcp")
	require.NoError(t, err)
	require.True(t, exists)
	var mounted []string
	for _, v := range obj.(*appsv1.Deployment).Spec.Template.Spec.Volumes {
		if v.Name == "ca-root" && v.Secret != nil {
			mounted = append(mounted, v.Secret.SecretName)
		}
	}
	assert.Equal(t, []string{"root-ca-trust"}, mounted, "the pods mount the root's trust bundle as ca-root")
}

// While an intermediate CA rotates, the reference Secrets carry, next to the key pair of the
// slot its Issuer signs from, the bundle of both slots (<ca>-trust.crt), the same bytes as the
// <ca>-trust its own pods mount: a consumer of a copy refreshed now trusts both CAs.
func TestReferenceSecretsOfARotatingCACarryBothSlots(t *testing.T) {
	rs := testRootShard()
	rs.Status.Rotations = []operatorv1alpha1.CARotationState{
		// The server CA's Issuer stays on the old slot until Complete; the request-header
		// CA's moved to the new one.
		{Authority: string(pki.ServerCA), Phase: operatorv1alpha1.CARotationPreparing, Slot: 1},
		{Authority: string(pki.RequestHeaderClientCA), Phase: operatorv1alpha1.CARotationPrepared, Slot: 1, LeavesSwitched: true},
	}
	f := newFixture(t, rs)
	for range 5 {
		require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
		f.hostCatchesUp(t)
	}
	for _, c := range []struct {
		ca     pki.CA
		issuer string
	}{{pki.ServerCA, "root-server-ca"}, {pki.RequestHeaderClientCA, "root-requestheader-client-ca-next"}} {
		base := pki.CAName("root", c.ca)
		old, next := f.Host.Secret(t, "team-a", base).Data["tls.crt"], f.Host.Secret(t, "team-a", base+"-next").Data["tls.crt"]
		require.NotEqual(t, old, next)
		trust := f.Host.Secret(t, "team-a", base+"-trust").Data["tls.crt"]
		for _, chain := range [][]byte{old, next} {
			block, _ := pem.Decode(chain)
			require.NotNil(t, block)
			assert.Contains(t, string(trust), string(pem.EncodeToMemory(block)), "%s-trust carries each slot", base)
		}
		for _, r := range []reference.Reference{reference.ShardJoin, reference.FrontProxyJoin} {
			s := f.Host.Secret(t, "team-a", r.Name("root"))
			assert.Equal(t, trust, s.Data[reference.TrustKey(c.ca)], "%s: %s carries what the pods trust", r, c.ca)
			assert.Equal(t, f.Host.Secret(t, "team-a", c.issuer).Data["tls.key"], s.Data[reference.KeyKey(c.ca)], "%s: the key of the Issuer's slot", r)
		}
	}
	// A CA that does not rotate is trusted alone.
	client, err := pki.FirstCertificate(f.Host.Secret(t, "team-a", "root-client-ca").Data["tls.crt"])
	require.NoError(t, err)
	assert.Equal(t, client, f.Host.Secret(t, "team-a", "root-shard-join").Data[reference.TrustKey(pki.ClientCA)])
}
