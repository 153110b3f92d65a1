package kubeconfig

import (
	"context"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// defaultWorkspace is where bindings go when neither targetWorkspace nor the deprecated
// cluster says otherwise, as defaulting sets targetWorkspace.
const defaultWorkspace = "root"

// bindPermissions holds spec.authorization to what the author could bind directly. The
// controller binds each ClusterRole in kcp with the server's admin identity, so two rights are
// asked, in the Kubeconfig's namespace, where its kcp setup lives, as every other permission
// of the kind is:
//
//   - bind on the workspace: verb bind on workspaces.operator.kcp.io, named by the workspace
//     path the bindings go to (spec.targetWorkspace, root by default, or the deprecated
//     clusterRoleBindings.cluster). RBAC's resourceNames then grant binding in named
//     workspaces only, such as root:team-a, and never in root unless it is named.
//   - bind on each ClusterRole: RBAC's escalation check on clusterroles. kcp's roles are not
//     the host's, so the other way RBAC allows a binding (holding every permission of the role
//     already) cannot be checked here.
//
// Neither subsumes the other: the first names no role and the second no workspace, and RBAC
// cannot name both in one resource name. The workspace is part of what is asked for each
// role too, so that moving the bindings to another workspace asks everything again, while
// removing or reordering roles asks nothing.
func bindPermissions(kc *operator.Kubeconfig) []store.Permission {
	authz := kc.Spec.Authorization
	if authz == nil {
		return nil
	}
	workspace, workspaceField := bindingWorkspace(&kc.Spec)
	rolesPath := field.NewPath("spec", "authorization", "clusterRoleBindings", "clusterRoles")
	perms := make([]store.Permission, 0, 1+len(authz.ClusterRoleBindings.ClusterRoles))
	perms = append(perms, store.Permission{
		Field: workspaceField.String(), Value: "the workspace " + workspace + " of spec.authorization's ClusterRoleBindings",
		Verb: VerbBind, Group: operator.GroupName, Resource: WorkspacesResource, Name: workspace,
	})
	for i, role := range authz.ClusterRoleBindings.ClusterRoles {
		perms = append(perms, store.Permission{
			Field: rolesPath.Index(i).String(), Value: fmt.Sprintf("ClusterRole %q in workspace %s", role, workspace),
			Verb: VerbBind, Group: rbacv1.GroupName, Resource: "clusterroles", Name: role,
		})
	}
	return perms
}

// The permission spec.authorization asks on the workspace its bindings go to: bind on
// workspaces.operator.kcp.io, named by the workspace path. There is no such resource to
// read or write; it is a name RBAC rules can grant.
const (
	VerbBind           = "bind"
	WorkspacesResource = "workspaces"
)

// bindingWorkspace is where a Kubeconfig's ClusterRoleBindings are created, by kcp-operator's
// rule, and the field that says so: the deprecated clusterRoleBindings.cluster when set
// (validation allows it only with the default targetWorkspace), else targetWorkspace. The
// resources builder's BindingWorkspace is the same rule over the versioned type.
func bindingWorkspace(spec *operator.KubeconfigSpec) (string, *field.Path) {
	if a := spec.Authorization; a != nil && a.ClusterRoleBindings.Cluster != "" {
		return a.ClusterRoleBindings.Cluster, field.NewPath("spec", "authorization", "clusterRoleBindings", "cluster")
	}
	targetWorkspace := field.NewPath("spec", "targetWorkspace")
	if spec.TargetWorkspace != "" {
		return spec.TargetWorkspace, targetWorkspace
	}
	return defaultWorkspace, targetWorkspace
}

// admitSkipCleanup holds the annotation operator.kcp.io/skip-kcp-cleanup: "true" to the
// rights of what it does. With it, deleting the Kubeconfig leaves its ClusterRoleBindings in
// kcp, still granting their roles to the group kubeconfig:<namespace>:<name>, which the next
// Kubeconfig of that name carries without being asked anything. So the annotation may become
// "true" (on create or update) only for a requester who may delete the Kubeconfig (delete on
// kubeconfigs.operator.kcp.io, named) and who holds every bind permission of its bindings,
// those of the stored spec and those of the new one (bindPermissions): one who could have
// bound the roles there directly, and so leave them. Another value, or removing it, asks
// nothing, since it lets the controller clean up.
func admitSkipCleanup(ctx context.Context, authz authorizer.Authorizer, requester user.Info, kc, old *operator.Kubeconfig) error {
	const annotation = operatorv1alpha1.AnnotationSkipKcpCleanup
	if kc.Annotations[annotation] != "true" || old != nil && old.Annotations[annotation] == "true" {
		return nil
	}
	need := []store.Permission{{
		Field: field.NewPath("metadata", "annotations").Key(annotation).String(), Value: "true",
		Verb: "delete", Group: operator.GroupName, Resource: "kubeconfigs", Name: kc.Name,
	}}
	need = append(need, bindPermissions(kc)...)
	if old != nil {
		for _, p := range bindPermissions(old) {
			if !slices.ContainsFunc(need, func(n store.Permission) bool {
				return n.Verb == p.Verb && n.Group == p.Group && n.Resource == p.Resource && n.Name == p.Name
			}) {
				need = append(need, p)
			}
		}
	}
	var missing []string
	for _, p := range need {
		decision, reason, err := authorizer.DecisionDeny, "", error(nil)
		if authz != nil {
			decision, reason, err = authz.Authorize(ctx, authorizer.AttributesRecord{
				User: requester, Verb: p.Verb, APIGroup: p.Group, Resource: p.Resource,
				Namespace: kc.Namespace, Name: p.Name, ResourceRequest: true,
			})
		}
		if decision == authorizer.DecisionAllow {
			continue
		}
		what := p.String()
		switch {
		case err != nil:
			what += fmt.Sprintf(" (could not be checked: %v)", err)
		case reason != "":
			what += fmt.Sprintf(" (%s)", reason)
		}
		missing = append(missing, what)
	}
	if len(missing) == 0 {
		return nil
	}
	return apierrors.NewForbidden(operator.Resource("kubeconfigs"), kc.Name, fmt.Errorf(
		"user %q may not set the annotation %s to \"true\" without %s in namespace %q: deleting the Kubeconfig would then leave its "+
			"ClusterRoleBindings in kcp for the next Kubeconfig of its name",
		requester.GetName(), annotation, strings.Join(missing, ", "), kc.Namespace))
}
