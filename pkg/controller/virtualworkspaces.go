package controller

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	listers "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/virtualworkspace"
)

// KcpServerVirtualWorkspace resolves the VirtualWorkspace that a root shard or shard names in
// spec.kcpVirtualWorkspace. It returns nil and no reason when none is named; nil and the
// reason of ReferenceValid=False when it does not exist, is being deleted, or serves another
// target: kcp would then advertise and call a server that does not serve its workspaces.
func KcpServerVirtualWorkspace(vws listers.VirtualWorkspaceLister, kind, namespace, name string, spec *operatorv1alpha1.CommonShardSpec) (vw *operatorv1alpha1.VirtualWorkspace, reason, message string, err error) {
	ref := spec.KcpVirtualWorkspace
	if ref == nil {
		return nil, "", "", nil
	}
	vw, err = vws.VirtualWorkspaces(namespace).Get(ref.Name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, operatorv1alpha1.ReasonVirtualWorkspaceNotFound, fmt.Sprintf("VirtualWorkspace %q does not exist in namespace %q", ref.Name, namespace), nil
	case err != nil:
		return nil, "", "", err
	case vw.DeletionTimestamp != nil:
		return nil, operatorv1alpha1.ReasonVirtualWorkspaceNotFound, fmt.Sprintf("VirtualWorkspace %q is being deleted", ref.Name), nil
	case !VirtualWorkspaceServes(vw, kind, name):
		return nil, operatorv1alpha1.ReasonVirtualWorkspaceTargetMismatch,
			fmt.Sprintf("VirtualWorkspace %q serves %s, not %s", ref.Name, VirtualWorkspaceTarget(vw), kindNames[kind]+"/"+name), nil
	}
	return vw, "", "", nil
}

// VirtualWorkspaceEndpoint is a VirtualWorkspace as the shard it serves sees it; nil for
// none.
func VirtualWorkspaceEndpoint(vw *operatorv1alpha1.VirtualWorkspace) *kcp.VirtualWorkspaceEndpoint {
	if vw == nil {
		return nil
	}
	return &kcp.VirtualWorkspaceEndpoint{URL: virtualworkspace.VirtualWorkspace{VirtualWorkspace: vw}.URL()}
}

// kindNames are the kinds a VirtualWorkspace serves, by their owner label's kind.
var kindNames = map[string]string{"rootshard": "RootShard", "shard": "Shard"}

// VirtualWorkspaceServes reports whether vw's target is the root shard or shard name; kind is
// "rootshard" or "shard".
func VirtualWorkspaceServes(vw *operatorv1alpha1.VirtualWorkspace, kind, name string) bool {
	t := vw.Spec.Target
	switch kind {
	case "rootshard":
		return t.RootShardRef != nil && t.RootShardRef.Name == name
	case "shard":
		return t.ShardRef != nil && t.ShardRef.Name == name
	}
	return false
}

// VirtualWorkspaceTarget names vw's target as Kind/name, for messages, as the registry's Target
// column shows it.
func VirtualWorkspaceTarget(vw *operatorv1alpha1.VirtualWorkspace) string {
	switch t := vw.Spec.Target; {
	case t.RootShardRef != nil:
		return "RootShard/" + t.RootShardRef.Name
	case t.ShardRef != nil:
		return "Shard/" + t.ShardRef.Name
	}
	return "no target"
}

// NamesVirtualWorkspace reports whether spec names the VirtualWorkspace vw.
func NamesVirtualWorkspace(spec *operatorv1alpha1.CommonShardSpec, vw string) bool {
	return spec.KcpVirtualWorkspace != nil && spec.KcpVirtualWorkspace.Name == vw
}

// SetVirtualWorkspaceMissing sets ReferenceValid=False for a root shard or shard whose
// VirtualWorkspace cannot serve it. Its kcp server is not rolled to or away from it until it
// can: the VirtualWorkspace's informer event brings the object back.
func (l Lifecycle[T, S]) SetVirtualWorkspaceMissing(obj T, status *S, reason, message string) {
	before := l.Common(l.Status(obj)).Conditions
	l.SetCondition(obj, status, operatorv1alpha1.ConditionReferenceValid, metav1.ConditionFalse, reason, message)
	if c := meta.FindStatusCondition(*before, operatorv1alpha1.ConditionReferenceValid); c == nil || c.Reason != reason {
		l.Recorder.Event(obj, "Warning", reason, message)
	}
}
