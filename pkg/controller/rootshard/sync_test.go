package rootshard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
)

// fixture is a RootShard Controller over a fake host and hand-fed caches: a unit test of
// sync alone.
type fixture struct {
	*controllertest.Fixture[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus]
	c *Controller
}

func newFixture(t *testing.T, rs *operatorv1alpha1.RootShard) *fixture {
	f := &fixture{Fixture: controllertest.NewFixture(t, kinds.RootShard, rs)}
	f.c = controllertest.ControllerOf[Controller](f.Fixture)
	return f
}

// hostCatchesUp lets the host catch up, and the RootShard's cache hold what the controller
// wrote to it.
func (f *fixture) hostCatchesUp(t *testing.T) {
	f.Host.CatchUp(t)
	f.Stored(t, "team-a", "root")
}

// converge syncs until the RootShard is Running, as the host catches up in between.
func (f *fixture) converge(t *testing.T) {
	for range 5 {
		require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
		f.hostCatchesUp(t)
	}
	rs, err := kinds.RootShard.Lister(f.c.Indexes, "team-a").Get("root")
	require.NoError(t, err)
	require.Equal(t, operatorv1alpha1.PhaseRunning, rs.Status.Phase, "conditions: %+v", rs.Status.Conditions)
	f.Reset()
}

func testRootShard() *operatorv1alpha1.RootShard {
	return &operatorv1alpha1.RootShard{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a", Generation: 1},
		Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{ClusterDomain: "cluster.local",
				Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}}},
			External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 6443},
		},
	}
}

func TestResyncOfARealizedRootShardWritesNothing(t *testing.T) {
	f := newFixture(t, testRootShard())
	f.converge(t)

	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
	assert.Empty(t, f.Writes(), "a resync of an unchanged, realized RootShard must not write")
}

func TestFirstSyncAddsTheFinalizerOnly(t *testing.T) {
	f := newFixture(t, testRootShard())
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
	assert.Equal(t, []string{"update rootshards/"}, f.Writes())
}

func TestChangedSpecReappliesOnlyWhatChanged(t *testing.T) {
	f := newFixture(t, testRootShard())
	f.converge(t)

	rs, err := kinds.RootShard.Lister(f.c.Indexes, "team-a").Get("root")
	require.NoError(t, err)
	rs = rs.DeepCopy()
	rs.Spec.External.Hostname = "other.example.com"
	rs.Generation = 2
	require.NoError(t, f.Caches.RootShards.Update(rs))

	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
	assert.ElementsMatch(t, []string{
		"Certificate root-server",                               // its DNS names
		"Secret root-external-logical-cluster-admin-kubeconfig", // its server URL
		"Deployment root-kcp",                                   // --shard-external-url
		"Secret root-shard-join",                                // their external-url
		"Secret root-front-proxy-join",
		"Secret root-kubeconfig-issuer",
		"update rootshards/status", // observedGeneration
	}, f.Writes())
}

// ExternalLogicalClusterAdminKubeconfig is the suffix of that kubeconfig Secret's name.
func ExternalLogicalClusterAdminKubeconfig() string {
	return "external-logical-cluster-admin-kubeconfig"
}

func TestMountedSecretChangeRollsTheDeployment(t *testing.T) {
	f := newFixture(t, testRootShard())
	f.converge(t)

	// cert-manager renews the server certificate: its Secret gets a new resource version.
	obj, exists, err := f.Host.Caches["secrets"].GetByKey("team-a/root-server")
	require.NoError(t, err)
	require.True(t, exists)
	renewed := obj.(*corev1.Secret).DeepCopy()
	renewed.ResourceVersion = "2"
	require.NoError(t, f.Host.Caches["secrets"].Update(renewed))

	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
	// The new pod template rolls the pods, so the RootShard is not Available meanwhile.
	assert.Equal(t, []string{"Deployment root-kcp", "update rootshards/status"}, f.Writes())
}

// TestAMissingCABundleSecretIsAnInvalidReference: a caBundleSecretRef or clientCABundleRef
// naming no Secret reads on a RootShard as on a FrontProxy: ReferenceValid=False says which
// Secret, with Synced=False, both CABundleSecretNotFound; once the Secret is there, both heal.
func TestAMissingCABundleSecretIsAnInvalidReference(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*operatorv1alpha1.RootShardSpec, *corev1.LocalObjectReference)
	}{
		{"caBundleSecretRef", func(s *operatorv1alpha1.RootShardSpec, ref *corev1.LocalObjectReference) { s.CABundleSecretRef = ref }},
		{"clientCABundleRef", func(s *operatorv1alpha1.RootShardSpec, ref *corev1.LocalObjectReference) { s.ClientCABundleRef = ref }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, testRootShard())
			f.converge(t)
			rs, err := kinds.RootShard.Lister(f.c.Indexes, "team-a").Get("root")
			require.NoError(t, err)
			rs = rs.DeepCopy()
			tc.set(&rs.Spec, &corev1.LocalObjectReference{Name: "partner-ca"})
			rs.Generation = 2
			require.NoError(t, f.Caches.RootShards.Update(rs))

			require.Error(t, f.c.SyncKey(t.Context(), "team-a/root"), "the key is retried with backoff")
			got := f.Stored(t, "team-a", "root")
			for _, ct := range []string{operatorv1alpha1.ConditionReferenceValid, operatorv1alpha1.ConditionSynced} {
				c := meta.FindStatusCondition(got.Status.Conditions, ct)
				require.NotNil(t, c, ct)
				assert.Equal(t, metav1.ConditionFalse, c.Status, ct)
				assert.Equal(t, operatorv1alpha1.ReasonCABundleSecretNotFound, c.Reason, ct)
				assert.Contains(t, c.Message, "the CA bundle Secret partner-ca does not exist", ct)
			}

			ca, _ := credentialstest.NewCA(t, "partner-ca")
			_, err = f.Host.Kube.CoreV1().Secrets("team-a").Create(t.Context(), &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "partner-ca"}, Data: map[string][]byte{"tls.crt": ca}}, metav1.CreateOptions{})
			require.NoError(t, err)
			require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
			got = f.Stored(t, "team-a", "root")
			for _, ct := range []string{operatorv1alpha1.ConditionReferenceValid, operatorv1alpha1.ConditionSynced} {
				c := meta.FindStatusCondition(got.Status.Conditions, ct)
				require.NotNil(t, c, ct)
				assert.Equal(t, metav1.ConditionTrue, c.Status, "%s: %+v", ct, c)
			}
		})
	}
}
