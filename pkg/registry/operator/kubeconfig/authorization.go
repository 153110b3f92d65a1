package kubeconfig

import (
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// defaultWorkspace is where bindings go when neither targetWorkspace nor the deprecated
// cluster says otherwise, as defaulting sets targetWorkspace.
const defaultWorkspace = "root"

// bindPermissions holds each ClusterRole spec.authorization binds to bind on it, which is
// RBAC's escalation check: the controller binds it in kcp with the server's admin identity,
// so only an author who may bind it directly may ask for it. kcp's roles are not the host's,
// so the other way RBAC allows a binding (holding every permission of the role already)
// cannot be checked here; bind is asked in the Kubeconfig's namespace, where its kcp setup
// lives, as every other permission of the kind is.
//
// The workspace is part of what is asked for, so that moving the bindings to another
// workspace is asked again, while removing or reordering roles asks nothing.
func bindPermissions(kc *operator.Kubeconfig) []store.Permission {
	authz := kc.Spec.Authorization
	if authz == nil {
		return nil
	}
	workspace := bindingWorkspace(&kc.Spec)
	rolesPath := field.NewPath("spec", "authorization", "clusterRoleBindings", "clusterRoles")
	perms := make([]store.Permission, 0, len(authz.ClusterRoleBindings.ClusterRoles))
	for i, role := range authz.ClusterRoleBindings.ClusterRoles {
		perms = append(perms, store.Permission{
			Field: rolesPath.Index(i).String(), Value: fmt.Sprintf("ClusterRole %q in workspace %s", role, workspace),
			Verb: "bind", Group: rbacv1.GroupName, Resource: "clusterroles", Name: role,
		})
	}
	return perms
}

// bindingWorkspace is where a Kubeconfig's ClusterRoleBindings are created, by kcp-operator's
// rule: the deprecated clusterRoleBindings.cluster when set (validation allows it only with
// the default targetWorkspace), else targetWorkspace. The resources builder's BindingWorkspace
// is the same rule over the versioned type.
func bindingWorkspace(spec *operator.KubeconfigSpec) string {
	if a := spec.Authorization; a != nil && a.ClusterRoleBindings.Cluster != "" {
		return a.ClusterRoleBindings.Cluster
	}
	if spec.TargetWorkspace != "" {
		return spec.TargetWorkspace
	}
	return defaultWorkspace
}
