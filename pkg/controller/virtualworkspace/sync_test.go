package virtualworkspace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

type fixture struct {
	*controllertest.Fixture[*operatorv1alpha1.VirtualWorkspace, operatorv1alpha1.VirtualWorkspaceStatus]
	c *Controller
}

func newFixture(t *testing.T, objs ...metav1.Object) *fixture {
	f := &fixture{Fixture: controllertest.NewFixture(t, kinds.VirtualWorkspace, objs...)}
	f.c = controllertest.ControllerOf[Controller](f.Fixture)
	return f
}

// issueRootShardCAs puts the Secrets a RootShard's controller and cert-manager would have
// written for the root shard "root" into the host's cache.
func (f *fixture) issueRootShardCAs(t *testing.T) {
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"}}
	names := []string{pki.RootCAName("root"), kcp.MergedClientCAName(rs), rootshard.MergedCABundleName(rs)}
	for _, ca := range pki.IntermediateCAs {
		names = append(names, pki.CAName("root", ca))
	}
	for _, name := range names {
		require.NoError(t, f.Host.Caches["secrets"].Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, ResourceVersion: "1"},
			Data: map[string][]byte{"tls.crt": []byte("ca")}}))
	}
}

// sync syncs the VirtualWorkspace, then lets its cache and the host catch up.
func (f *fixture) sync(t *testing.T) *operatorv1alpha1.VirtualWorkspace {
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/vw"))
	got := f.Stored(t, "team-a", "vw")
	f.Host.CatchUp(t)
	return got
}

func virtualWorkspace(target operatorv1alpha1.VirtualWorkspaceTarget) *operatorv1alpha1.VirtualWorkspace {
	return &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Name: "vw", Namespace: "team-a", Generation: 1, Finalizers: []string{kinds.VirtualWorkspace.Finalizer()}},
		Spec: operatorv1alpha1.VirtualWorkspaceSpec{Target: target}}
}

func condition(vw *operatorv1alpha1.VirtualWorkspace, t string) string {
	c := meta.FindStatusCondition(vw.Status.Conditions, t)
	if c == nil {
		return ""
	}
	return string(c.Status) + "/" + c.Reason
}

var (
	toRoot   = operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: &corev1.LocalObjectReference{Name: "root"}}
	toShard1 = operatorv1alpha1.VirtualWorkspaceTarget{ShardRef: &corev1.LocalObjectReference{Name: "shard-1"}}
	rootRS   = &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 6443}}}
	shard1 = &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: "shard-1", Namespace: "team-a"},
		Spec: operatorv1alpha1.ShardSpec{RootShard: controllertest.RootShardRef("root")}}
)

// TestAVirtualWorkspaceWaitsForItsTarget: without its target nothing is written, and the
// status says which object is missing.
func TestAVirtualWorkspaceWaitsForItsTarget(t *testing.T) {
	for name, tc := range map[string]struct {
		target operatorv1alpha1.VirtualWorkspaceTarget
		objs   []metav1.Object
		reason string
	}{
		"no RootShard":              {toRoot, nil, operatorv1alpha1.ReasonRootShardNotFound},
		"no Shard":                  {toShard1, []metav1.Object{rootRS}, operatorv1alpha1.ReasonShardNotFound},
		"a Shard without RootShard": {toShard1, []metav1.Object{shard1}, operatorv1alpha1.ReasonRootShardNotFound},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, append(tc.objs, virtualWorkspace(tc.target))...)
			got := f.sync(t)
			assert.Equal(t, "False/"+tc.reason, condition(got, operatorv1alpha1.ConditionReferenceValid))
			assert.Equal(t, "False/"+tc.reason, condition(got, operatorv1alpha1.ConditionAvailable))
			assert.Equal(t, operatorv1alpha1.PhaseProvisioning, got.Status.Phase)
			assert.Empty(t, f.Host.Writes(), "nothing is realized without a target")
		})
	}
}

// TestAVirtualWorkspaceOfAShardIsRealizedOnceAndNotAgain: with its target and the target's
// CAs, a VirtualWorkspace gets its certificates, kubeconfigs, Service and Deployment, runs,
// and a resync writes nothing.
func TestAVirtualWorkspaceOfAShardIsRealizedOnceAndNotAgain(t *testing.T) {
	f := newFixture(t, rootRS, shard1, virtualWorkspace(toShard1))
	f.issueRootShardCAs(t)
	var got *operatorv1alpha1.VirtualWorkspace
	for range 4 {
		got = f.sync(t)
	}
	require.Equal(t, operatorv1alpha1.PhaseRunning, got.Status.Phase, "conditions: %+v", got.Status.Conditions)
	assert.Equal(t, "True/"+operatorv1alpha1.ReasonReferencesFound, condition(got, operatorv1alpha1.ConditionReferenceValid))
	for _, name := range []string{"vw-virtual-workspace-server", "vw-virtual-workspace-client"} {
		_, exists, err := f.Host.Caches["certificates"].GetByKey("team-a/" + name)
		require.NoError(t, err)
		assert.True(t, exists, "the Certificate %s", name)
	}
	_, exists, err := f.Host.Caches["secrets"].GetByKey("team-a/vw-virtual-workspace-kubeconfig")
	require.NoError(t, err)
	assert.True(t, exists, "the kubeconfig toward the shard")
	_, exists, err = f.Host.Caches["deployments"].GetByKey("team-a/vw-virtual-workspace")
	require.NoError(t, err)
	assert.True(t, exists)

	f.Host.Reset()
	f.Ours.ClearActions()
	f.sync(t)
	assert.Empty(t, f.Host.Writes(f.Ours.Actions()), "a resync of an unchanged, realized VirtualWorkspace must not write")
}

// TestTheUsersIdentityTakesTheAdminKeysAway: once kubeconfigSecretRef names the user's own
// identity, the generated client and external-admin certificates and their Secrets are
// deleted, not left behind with their keys.
func TestTheUsersIdentityTakesTheAdminKeysAway(t *testing.T) {
	vw := virtualWorkspace(toRoot)
	f := newFixture(t, rootRS, vw)
	f.issueRootShardCAs(t)
	for range 3 {
		f.sync(t)
	}
	_, exists, err := f.Host.Caches["certificates"].GetByKey("team-a/vw-virtual-workspace-client")
	require.NoError(t, err)
	require.True(t, exists)

	vw = vw.DeepCopy()
	vw.Spec.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: "narrow"}
	require.NoError(t, f.Caches.VirtualWorkspaces.Update(vw))
	f.Host.Reset()
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/vw"))
	var deleted []string
	for _, a := range append(f.Host.Kube.Actions(), f.Host.CM.Actions()...) {
		if d, ok := a.(clienttesting.DeleteAction); ok {
			deleted = append(deleted, d.GetResource().Resource+"/"+d.GetName())
		}
	}
	for _, want := range []string{"certificates/vw-virtual-workspace-client", "secrets/vw-virtual-workspace-client",
		"secrets/vw-virtual-workspace-kubeconfig", "certificates/vw-virtual-workspace-external-admin"} {
		assert.Contains(t, deleted, want)
	}
	assert.NotContains(t, deleted, "certificates/vw-virtual-workspace-server")
	assert.NotContains(t, deleted, "secrets/vw-virtual-workspace-server")
}
