package virtualworkspace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	opfake "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/fake"
	listers "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

type fixture struct {
	c                                     *Controller
	ours                                  *opfake.Clientset
	host                                  *controllertest.Host
	virtualWorkspaces, rootShards, shards cache.Indexer
}

func newFixture(t *testing.T, objs ...metav1.Object) *fixture {
	f := &fixture{ours: opfake.NewSimpleClientset(), host: controllertest.NewHost(t),
		virtualWorkspaces: controllertest.NewCache(), rootShards: controllertest.NewCache(), shards: controllertest.NewCache()}
	for _, o := range objs {
		switch o := o.(type) {
		case *operatorv1alpha1.VirtualWorkspace:
			require.NoError(t, f.ours.Tracker().Add(o.DeepCopy()))
			require.NoError(t, f.virtualWorkspaces.Add(o.DeepCopy()))
		case *operatorv1alpha1.RootShard:
			require.NoError(t, f.rootShards.Add(o.DeepCopy()))
		case *operatorv1alpha1.Shard:
			require.NoError(t, f.shards.Add(o.DeepCopy()))
		}
	}
	f.c = &Controller{client: f.ours, virtualWorkspaces: listers.NewVirtualWorkspaceLister(f.virtualWorkspaces),
		rootShards: listers.NewRootShardLister(f.rootShards), shards: listers.NewShardLister(f.shards),
		cacheServers: listers.NewCacheServerLister(controllertest.NewCache()),
		indexes:      controller.Indexes{VirtualWorkspaces: f.virtualWorkspaces, RootShards: f.rootShards, Shards: f.shards}, host: f.host.Host, recorder: record.NewFakeRecorder(1000)}
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
		require.NoError(t, f.host.Caches["secrets"].Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, ResourceVersion: "1"},
			Data: map[string][]byte{"tls.crt": []byte("ca")}}))
	}
}

// sync syncs the VirtualWorkspace, then lets its cache and the host catch up.
func (f *fixture) sync(t *testing.T) *operatorv1alpha1.VirtualWorkspace {
	require.NoError(t, f.c.sync(t.Context(), "team-a/vw"))
	got, err := f.ours.OperatorV1alpha1().VirtualWorkspaces("team-a").Get(t.Context(), "vw", metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, f.virtualWorkspaces.Update(got))
	f.host.CatchUp(t)
	return got
}

func virtualWorkspace(target operatorv1alpha1.VirtualWorkspaceTarget) *operatorv1alpha1.VirtualWorkspace {
	return &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Name: "vw", Namespace: "team-a", Generation: 1, Finalizers: []string{Finalizer}},
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
		"no RootShard":              {toRoot, nil, controller.ReasonRootShardNotFound},
		"no Shard":                  {toShard1, []metav1.Object{rootRS}, controller.ReasonShardNotFound},
		"a Shard without RootShard": {toShard1, []metav1.Object{shard1}, controller.ReasonRootShardNotFound},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, append(tc.objs, virtualWorkspace(tc.target))...)
			got := f.sync(t)
			assert.Equal(t, "False/"+tc.reason, condition(got, operatorv1alpha1.ConditionReferenceValid))
			assert.Equal(t, "False/"+tc.reason, condition(got, operatorv1alpha1.ConditionAvailable))
			assert.Equal(t, operatorv1alpha1.PhaseProvisioning, got.Status.Phase)
			assert.Empty(t, f.host.Writes(), "nothing is realized without a target")
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
	assert.Equal(t, "True/"+controller.ReasonReferencesFound, condition(got, operatorv1alpha1.ConditionReferenceValid))
	for _, name := range []string{"vw-virtual-workspace-server", "vw-virtual-workspace-client"} {
		_, exists, err := f.host.Caches["certificates"].GetByKey("team-a/" + name)
		require.NoError(t, err)
		assert.True(t, exists, "the Certificate %s", name)
	}
	_, exists, err := f.host.Caches["secrets"].GetByKey("team-a/vw-virtual-workspace-kubeconfig")
	require.NoError(t, err)
	assert.True(t, exists, "the kubeconfig toward the shard")
	_, exists, err = f.host.Caches["deployments"].GetByKey("team-a/vw-virtual-workspace")
	require.NoError(t, err)
	assert.True(t, exists)

	f.host.Reset()
	f.ours.ClearActions()
	f.sync(t)
	assert.Empty(t, f.host.Writes(f.ours.Actions()), "a resync of an unchanged, realized VirtualWorkspace must not write")
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
	_, exists, err := f.host.Caches["certificates"].GetByKey("team-a/vw-virtual-workspace-client")
	require.NoError(t, err)
	require.True(t, exists)

	vw = vw.DeepCopy()
	vw.Spec.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: "narrow"}
	require.NoError(t, f.virtualWorkspaces.Update(vw))
	f.host.Reset()
	require.NoError(t, f.c.sync(t.Context(), "team-a/vw"))
	var deleted []string
	for _, a := range append(f.host.Kube.Actions(), f.host.CM.Actions()...) {
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
