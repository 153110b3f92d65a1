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
	if vw, reason, message, err = existingVirtualWorkspace(x, namespace, ref.Name); vw == nil {
		return nil, reason, message, err
	}
	if !VirtualWorkspaceServes(vw, kind, name) {
		return nil, operatorv1alpha1.ReasonVirtualWorkspaceTargetMismatch,
			fmt.Sprintf("VirtualWorkspace %q serves %s, not %s", ref.Name, VirtualWorkspaceTarget(vw), kindNames[kind]+"/"+name), nil
	}
	return vw, "", "", nil
}

// existingVirtualWorkspace is the VirtualWorkspace name of namespace, or nil and the reason
// of ReferenceValid=False when it does not exist or is being deleted.
func existingVirtualWorkspace(x controller.Indexes, namespace, name string) (*operatorv1alpha1.VirtualWorkspace, string, string, error) {
	vw, err := VirtualWorkspace.Lister(x, namespace).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, operatorv1alpha1.ReasonVirtualWorkspaceNotFound, fmt.Sprintf("VirtualWorkspace %q does not exist in namespace %q", name, namespace), nil
	case err != nil:
		return nil, "", "", err
	case vw.DeletionTimestamp != nil:
		return nil, operatorv1alpha1.ReasonVirtualWorkspaceNotFound, fmt.Sprintf("VirtualWorkspace %q is being deleted", name), nil
	}
	return vw, "", "", nil
}

// MappedVirtualWorkspace resolves the VirtualWorkspace name of namespace that a FrontProxy of
// the RootShard rootShard maps a path to (spec.additionalPathMappings[].virtualWorkspaceRef).
// It must serve rootShard or one of its Shards: its serving certificate is then signed by
// the server CA the proxy verifies, and it trusts the request-header CA that signs the
// proxy's identity. Otherwise it returns nil and the reason of ReferenceValid=False, as
// KcpServerVirtualWorkspace does.
func MappedVirtualWorkspace(x controller.Indexes, namespace, rootShard, name string) (vw *operatorv1alpha1.VirtualWorkspace, reason, message string, err error) {
	if vw, reason, message, err = existingVirtualWorkspace(x, namespace, name); vw == nil {
		return nil, reason, message, err
	}
	serves := VirtualWorkspaceServes(vw, RootShard.Name, rootShard)
	if t := vw.Spec.Target.ShardRef; t != nil {
		s, err := Shard.Lister(x, namespace).Get(t.Name)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, "", "", err
		}
		serves = err == nil && controller.ShardRootShard(s) == rootShard
	}
	if !serves {
		return nil, operatorv1alpha1.ReasonVirtualWorkspaceTargetMismatch,
			fmt.Sprintf("VirtualWorkspace %q serves %s, not %s/%s or one of its Shards: its path is not routed", name, VirtualWorkspaceTarget(vw), RootShard.Title, rootShard), nil
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
