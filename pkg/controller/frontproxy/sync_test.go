package frontproxy

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
	listers "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
)

// syncFixture is a FrontProxy edge of the RootShard root, whose CAs are issued, and its
// controller over fakes; sync reconciles it once and returns what the status then is.
type syncFixture struct {
	*controllertest.Fixture[*operatorv1alpha1.FrontProxy, operatorv1alpha1.FrontProxyStatus]
	c *Controller
}

func newSyncFixture(t *testing.T, spec func(*operatorv1alpha1.FrontProxySpec)) *syncFixture {
	fp := &operatorv1alpha1.FrontProxy{
		ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "team-a", Generation: 1, Finalizers: []string{kinds.FrontProxy.Finalizer()}},
		Spec:       operatorv1alpha1.FrontProxySpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}},
	}
	if spec != nil {
		spec(&fp.Spec)
	}
	f := &syncFixture{Fixture: controllertest.NewFixture(t, kinds.FrontProxy, fp, &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 443}}})}
	for _, name := range []string{"root-merged-client-ca", "root-server-ca", "root-requestheader-client-ca"} {
		f.Add(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, ResourceVersion: "1"}})
	}
	f.c = controllertest.ControllerOf[Controller](f.Fixture)
	return f
}

// syncWith reconciles edge once, expecting wantErr, and returns it as stored then.
func (f *syncFixture) syncWith(t *testing.T, wantErr bool) *operatorv1alpha1.FrontProxy {
	err := f.c.SyncKey(t.Context(), "team-a/edge")
	if wantErr {
		require.Error(t, err)
	} else {
		require.NoError(t, err)
	}
	got := f.Stored(t, "team-a", "edge")
	f.Host.CatchUp(t)
	return got
}

func TestResyncOfARealizedFrontProxyWritesNothing(t *testing.T) {
	f := newSyncFixture(t, nil)
	ours, host, fps := f.Ours, f.Host, f.Caches.FrontProxies
	sync := func() *operatorv1alpha1.FrontProxy { return f.syncWith(t, false) }
	for range 4 {
		sync()
	}
	got, err := listers.NewFrontProxyLister(fps).FrontProxies("team-a").Get("edge")
	require.NoError(t, err)
	require.Equal(t, operatorv1alpha1.PhaseRunning, got.Status.Phase, "conditions: %+v", got.Status.Conditions)
	rootShard := meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionRootShard)
	require.NotNil(t, rootShard, "kcp-operator's RootShard condition")
	assert.Equal(t, metav1.ConditionTrue, rootShard.Status)
	assert.Equal(t, "Valid", rootShard.Reason)
	assert.Len(t, host.Caches["deployments"].List(), 1)
	assert.Len(t, host.Caches["configmaps"].List(), 1)

	host.Reset()
	ours.ClearActions()
	sync()
	assert.Empty(t, host.Writes(ours.Actions()), "a resync of an unchanged, realized FrontProxy must not write")
}

// TestAMissingCABundleSecretIsAnInvalidReference: a caBundleSecretRef naming no Secret is the
// user's reference, not the host's refusal: ReferenceValid=False says which Secret, with
// Synced=False, both CABundleSecretNotFound; once the Secret is there, both heal.
func TestAMissingCABundleSecretIsAnInvalidReference(t *testing.T) {
	f := newSyncFixture(t, func(s *operatorv1alpha1.FrontProxySpec) {
		s.CABundleSecretRef = &corev1.LocalObjectReference{Name: "partner-ca"}
	})
	// The user's bundle is merged into the RootShard's, once that is written.
	rootCA, _ := credentialstest.NewCA(t, "root-server-ca")
	require.NoError(t, f.Host.Caches["secrets"].Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root-merged-ca-bundle", ResourceVersion: "1"},
		Data: map[string][]byte{"tls.crt": rootCA}}))
	got := f.syncWith(t, true)
	for _, ct := range []string{operatorv1alpha1.ConditionReferenceValid, operatorv1alpha1.ConditionSynced} {
		c := meta.FindStatusCondition(got.Status.Conditions, ct)
		require.NotNil(t, c, ct)
		assert.Equal(t, metav1.ConditionFalse, c.Status, ct)
		assert.Equal(t, operatorv1alpha1.ReasonCABundleSecretNotFound, c.Reason, ct)
		assert.Contains(t, c.Message, "the CA bundle Secret partner-ca does not exist", ct)
	}

	ca, _ := credentialstest.NewCA(t, "partner-ca")
	_, err := f.Host.Kube.CoreV1().Secrets("team-a").Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "partner-ca"}, Data: map[string][]byte{"tls.crt": ca}}, metav1.CreateOptions{})
	require.NoError(t, err)
	got = f.syncWith(t, false)
	for _, ct := range []string{operatorv1alpha1.ConditionReferenceValid, operatorv1alpha1.ConditionSynced} {
		c := meta.FindStatusCondition(got.Status.Conditions, ct)
		require.NotNil(t, c, ct)
		assert.Equal(t, metav1.ConditionTrue, c.Status, "%s: %+v", ct, c)
	}
}

// TestAFrontProxyWithoutItsRootShardHasRootShardFalse: kcp-operator's RootShard condition is
// False with its reason InvalidReference while the RootShard does not exist.
func TestAFrontProxyWithoutItsRootShardHasRootShardFalse(t *testing.T) {
	f := newSyncFixture(t, func(s *operatorv1alpha1.FrontProxySpec) { s.RootShard.Reference.Name = "elsewhere" })
	got := f.syncWith(t, false)
	rootShard := meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionRootShard)
	require.NotNil(t, rootShard)
	assert.Equal(t, metav1.ConditionFalse, rootShard.Status)
	assert.Equal(t, "InvalidReference", rootShard.Reason)
	assert.Contains(t, rootShard.Message, `RootShard "elsewhere" does not exist`)
}

// TestAPathMappedToAVirtualWorkspace: a path mapped to a VirtualWorkspace is left out of the
// proxy's mapping file while the VirtualWorkspace is missing or serves another RootShard,
// with ReferenceValid=False and the reason the root shard uses for its own; once a
// VirtualWorkspace of the FrontProxy's RootShard is there, the path goes to its Service
// with the built-in /services/ mapping's CA and request-header identity.
func TestAPathMappedToAVirtualWorkspace(t *testing.T) {
	f := newSyncFixture(t, func(s *operatorv1alpha1.FrontProxySpec) {
		s.AdditionalPathMappings = []operatorv1alpha1.PathMappingEntry{{Path: "/services/access", VirtualWorkspaceRef: &corev1.LocalObjectReference{Name: "access"}}}
	})
	mapping := func() string {
		cm, exists, err := f.Host.Caches["configmaps"].GetByKey("team-a/edge-config")
		require.NoError(t, err)
		require.True(t, exists)
		return cm.(*corev1.ConfigMap).Data["path-mapping.yaml"]
	}
	referenceValid := func(got *operatorv1alpha1.FrontProxy) *metav1.Condition {
		c := meta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionReferenceValid)
		require.NotNil(t, c)
		return c
	}
	c := referenceValid(f.syncWith(t, false))
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, operatorv1alpha1.ReasonVirtualWorkspaceNotFound, c.Reason)
	assert.Equal(t, `path /services/access: VirtualWorkspace "access" does not exist in namespace "team-a"`, c.Message)
	assert.NotContains(t, mapping(), "/services/access")

	vw := &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "access", ResourceVersion: "1"},
		Spec: operatorv1alpha1.VirtualWorkspaceSpec{Target: operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: &corev1.LocalObjectReference{Name: "other-root"}}}}
	f.Add(t, vw)
	c = referenceValid(f.syncWith(t, false))
	assert.Equal(t, operatorv1alpha1.ReasonVirtualWorkspaceTargetMismatch, c.Reason)
	assert.NotContains(t, mapping(), "/services/access", "the identity goes to no VirtualWorkspace of another RootShard")

	vw = vw.DeepCopy()
	vw.ResourceVersion, vw.Spec.Target.RootShardRef.Name = "2", "root"
	require.NoError(t, f.Caches.VirtualWorkspaces.Update(vw))
	c = referenceValid(f.syncWith(t, false))
	assert.Equal(t, metav1.ConditionTrue, c.Status, "%+v", c)
	assert.Contains(t, mapping(), `- backend: https://access-virtual-workspace.team-a.svc.cluster.local:6443
  backend_server_ca: /etc/kcp-front-proxy/ca/server/tls.crt
  path: /services/access
  proxy_client_cert: /etc/kcp-front-proxy/requestheader/tls.crt
  proxy_client_key: /etc/kcp-front-proxy/requestheader/tls.key
`)
}
