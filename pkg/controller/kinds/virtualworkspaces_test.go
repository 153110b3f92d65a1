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
