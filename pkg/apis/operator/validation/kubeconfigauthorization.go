package validation

import (
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// defaultTargetWorkspace is what defaulting sets an empty targetWorkspace to.
const defaultTargetWorkspace = "root"

// validateKubeconfigAuthorization checks kcp-operator's ClusterRoleBindings of a Kubeconfig's
// identity: at least one ClusterRole, each a name RBAC accepts, none twice (each is one
// binding), and the deprecated cluster only where it does not contradict targetWorkspace.
// Whether the author may bind them is the registry's check, not validation's; the Kubeconfig
// controller writes the bindings into kcp.
func validateKubeconfigAuthorization(authz *operator.KubeconfigAuthorization, targetWorkspace string, fldPath *field.Path) field.ErrorList {
	if authz == nil {
		return nil
	}
	bindingsPath := fldPath.Child("clusterRoleBindings")
	bindings := &authz.ClusterRoleBindings
	var allErrs field.ErrorList
	rolesPath := bindingsPath.Child("clusterRoles")
	if len(bindings.ClusterRoles) == 0 {
		allErrs = append(allErrs, field.Required(rolesPath, "at least one ClusterRole to bind"))
	}
	allErrs = append(allErrs, validateNonEmptyUniqueStrings(bindings.ClusterRoles, rolesPath)...)
	for i, role := range bindings.ClusterRoles {
		if role != "" {
			// The names RBAC accepts for a ClusterRole.
			allErrs = append(allErrs, invalidForEach(rolesPath.Index(i), role, path.ValidatePathSegmentName(role, false))...)
		}
	}
	if bindings.Cluster != "" {
		clusterPath := bindingsPath.Child("cluster")
		allErrs = append(allErrs, validateWorkspacePath(bindings.Cluster, clusterPath)...)
		// kcp-operator's rule; defaulting has set an omitted targetWorkspace to root.
		if targetWorkspace != "" && targetWorkspace != defaultTargetWorkspace {
			allErrs = append(allErrs, field.Forbidden(clusterPath,
				"may not be set together with spec.targetWorkspace: use spec.targetWorkspace only"))
		}
	}
	return allErrs
}

// validateKubeconfigAuthorizationStatus checks where a Kubeconfig's bindings are said to be:
// empty while none are, else a workspace path or logical cluster name, as the spec's are.
func validateKubeconfigAuthorizationStatus(status *operator.KubeconfigAuthorizationStatus, fldPath *field.Path) field.ErrorList {
	if status == nil || status.ProvisionedCluster == "" {
		return nil
	}
	return validateWorkspacePath(status.ProvisionedCluster, fldPath.Child("provisionedCluster"))
}
