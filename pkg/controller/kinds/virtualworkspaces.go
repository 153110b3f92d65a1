package kinds

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/virtualworkspace"
)

// KcpServerVirtualWorkspace resolves the VirtualWorkspace that a root shard or shard names in
// spec.kcpVirtualWorkspace. It returns nil and no reason when none is named; nil and the
// reason of ReferenceValid=False when it does not exist, is being deleted, or serves another
// target: kcp would then advertise and call a server that does not serve its workspaces.
func KcpServerVirtualWorkspace(x controller.Indexes, kind, namespace, name string, spec *operatorv1alpha1.CommonShardSpec) (vw *operatorv1alpha1.VirtualWorkspace, reason, message string, err error) {
	ref := spec.KcpVirtualWorkspace
	if ref == nil {
		return nil, "", "", nil
	}
	vw, err = VirtualWorkspace.Lister(x, namespace).Get(ref.Name)
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
var kindNames = map[string]string{RootShard.Name: RootShard.Title, Shard.Name: Shard.Title}

// VirtualWorkspaceServes reports whether vw's target is the root shard or shard name; kind is
// "rootshard" or "shard".
func VirtualWorkspaceServes(vw *operatorv1alpha1.VirtualWorkspace, kind, name string) bool {
	t := vw.Spec.Target
	switch kind {
	case RootShard.Name:
		return t.RootShardRef != nil && t.RootShardRef.Name == name
	case Shard.Name:
		return t.ShardRef != nil && t.ShardRef.Name == name
	}
	return false
}

// VirtualWorkspaceTarget names vw's target as Kind/name, for messages, as the registry's Target
// column shows it.
func VirtualWorkspaceTarget(vw *operatorv1alpha1.VirtualWorkspace) string {
	switch t := vw.Spec.Target; {
	case t.RootShardRef != nil:
		return RootShard.Title + "/" + t.RootShardRef.Name
	case t.ShardRef != nil:
		return Shard.Title + "/" + t.ShardRef.Name
	}
	return "no target"
}

// NamesVirtualWorkspace reports whether spec names the VirtualWorkspace vw.
func NamesVirtualWorkspace(spec *operatorv1alpha1.CommonShardSpec, vw string) bool {
	return spec.KcpVirtualWorkspace != nil && spec.KcpVirtualWorkspace.Name == vw
}
