package kinds

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
)

// TestShardVirtualWorkspace: the VirtualWorkspace a shard names serves it, or the reason why
// not is one of ReferenceValid's stable reasons.
func TestShardVirtualWorkspace(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	vw := func(name string, target operatorv1alpha1.VirtualWorkspaceTarget) *operatorv1alpha1.VirtualWorkspace {
		return &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name},
			Spec: operatorv1alpha1.VirtualWorkspaceSpec{Target: target}}
	}
	deleting := vw("deleting", operatorv1alpha1.VirtualWorkspaceTarget{ShardRef: &corev1.LocalObjectReference{Name: "shard-1"}})
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	for _, o := range []*operatorv1alpha1.VirtualWorkspace{
		vw("of-shard-1", operatorv1alpha1.VirtualWorkspaceTarget{ShardRef: &corev1.LocalObjectReference{Name: "shard-1"}}),
		vw("of-root", operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: &corev1.LocalObjectReference{Name: "root"}}),
		deleting,
	} {
		require.NoError(t, idx.Add(o))
	}
	x := controller.Indexes{VirtualWorkspace.Name: idx}
	spec := func(name string) *operatorv1alpha1.CommonShardSpec {
		if name == "" {
			return &operatorv1alpha1.CommonShardSpec{}
		}
		return &operatorv1alpha1.CommonShardSpec{KcpVirtualWorkspace: &corev1.LocalObjectReference{Name: name}}
	}
	for _, tc := range []struct {
		name, kind, shard, vw string
		found                 bool
		reason, message       string
	}{
		{name: "none named", kind: "shard", shard: "shard-1"},
		{name: "its own", kind: "shard", shard: "shard-1", vw: "of-shard-1", found: true},
		{name: "the root shard's own", kind: "rootshard", shard: "root", vw: "of-root", found: true},
		{name: "missing", kind: "shard", shard: "shard-1", vw: "nope", reason: operatorv1alpha1.ReasonVirtualWorkspaceNotFound,
			message: `VirtualWorkspace "nope" does not exist in namespace "team-a"`},
		{name: "being deleted", kind: "shard", shard: "shard-1", vw: "deleting", reason: operatorv1alpha1.ReasonVirtualWorkspaceNotFound,
			message: `VirtualWorkspace "deleting" is being deleted`},
		{name: "another shard's", kind: "shard", shard: "shard-2", vw: "of-shard-1", reason: operatorv1alpha1.ReasonVirtualWorkspaceTargetMismatch,
			message: `VirtualWorkspace "of-shard-1" serves Shard/shard-1, not Shard/shard-2`},
		{name: "a shard's, named by a root shard", kind: "rootshard", shard: "shard-1", vw: "of-shard-1", reason: operatorv1alpha1.ReasonVirtualWorkspaceTargetMismatch,
			message: `VirtualWorkspace "of-shard-1" serves Shard/shard-1, not RootShard/shard-1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason, message, err := KcpServerVirtualWorkspace(x, tc.kind, "team-a", tc.shard, spec(tc.vw))
			require.NoError(t, err)
			assert.Equal(t, tc.found, got != nil)
			assert.Equal(t, tc.reason, reason)
			assert.Equal(t, tc.message, message)
			if tc.found {
				assert.Equal(t, "https://"+tc.vw+"-virtual-workspace.team-a.svc.cluster.local:6443", VirtualWorkspaceEndpoint(got).URL)
			}
		})
	}
	assert.Nil(t, VirtualWorkspaceEndpoint(nil))
}

// TestMappedVirtualWorkspace: a FrontProxy's path goes to a VirtualWorkspace of its RootShard
// or of one of its Shards (signed by the CAs the proxy's identity and verification use);
// any other, or one that is not there, has one of ReferenceValid's stable reasons.
func TestMappedVirtualWorkspace(t *testing.T) {
	vws := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	shards := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	target := func(name string, t operatorv1alpha1.VirtualWorkspaceTarget) *operatorv1alpha1.VirtualWorkspace {
		return &operatorv1alpha1.VirtualWorkspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name},
			Spec: operatorv1alpha1.VirtualWorkspaceSpec{Target: t}}
	}
	ref := func(name string) *corev1.LocalObjectReference { return &corev1.LocalObjectReference{Name: name} }
	for _, o := range []*operatorv1alpha1.VirtualWorkspace{
		target("access", operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: ref("root")}),
		target("of-shard-1", operatorv1alpha1.VirtualWorkspaceTarget{ShardRef: ref("shard-1")}),
		target("of-other-root", operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: ref("other-root")}),
		target("of-other-shard", operatorv1alpha1.VirtualWorkspaceTarget{ShardRef: ref("other-shard")}),
		target("of-no-shard", operatorv1alpha1.VirtualWorkspaceTarget{ShardRef: ref("nope")}),
	} {
		require.NoError(t, vws.Add(o))
	}
	for name, rs := range map[string]string{"shard-1": "root", "other-shard": "other-root"} {
		require.NoError(t, shards.Add(&operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name},
			Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: ref(rs)}}}))
	}
	x := controller.Indexes{VirtualWorkspace.Name: vws, Shard.Name: shards}
	for _, tc := range []struct {
		vw              string
		found           bool
		reason, message string
	}{
		{vw: "access", found: true},
		{vw: "of-shard-1", found: true},
		{vw: "missing", reason: operatorv1alpha1.ReasonVirtualWorkspaceNotFound, message: `VirtualWorkspace "missing" does not exist in namespace "team-a"`},
		{vw: "of-other-root", reason: operatorv1alpha1.ReasonVirtualWorkspaceTargetMismatch,
			message: `VirtualWorkspace "of-other-root" serves RootShard/other-root, not RootShard/root or one of its Shards: its path is not routed`},
		{vw: "of-other-shard", reason: operatorv1alpha1.ReasonVirtualWorkspaceTargetMismatch,
			message: `VirtualWorkspace "of-other-shard" serves Shard/other-shard, not RootShard/root or one of its Shards: its path is not routed`},
		{vw: "of-no-shard", reason: operatorv1alpha1.ReasonVirtualWorkspaceTargetMismatch},
	} {
		t.Run(tc.vw, func(t *testing.T) {
			got, reason, message, err := MappedVirtualWorkspace(x, "team-a", "root", tc.vw)
			require.NoError(t, err)
			assert.Equal(t, tc.found, got != nil)
			assert.Equal(t, tc.reason, reason)
			if tc.message != "" {
				assert.Equal(t, tc.message, message)
			}
		})
	}
}
