package kubeconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// What spec.authorization realizes inside kcp: one ClusterRoleBinding per ClusterRole, in the
// workspace BindingWorkspace names, for the group Group, which the Kubeconfig's certificate
// carries. These objects live in kcp, not in the host cluster: several kcp-setups
// namespaces' Kubeconfigs of the same name may bind in one workspace, so names and labels
// carry the host namespace as well as the name.

const (
	// GroupPrefix starts the group a Kubeconfig's bindings name, kubeconfig:<namespace>:<name>.
	// kcp-operator's is kubeconfig:<name>, which Kubeconfigs of the same name in other
	// namespaces share, so that one would hold whatever another's bindings grant.
	GroupPrefix = "kubeconfig:"
	// maxGroup is the longest group: a certificate's Organization holds at most 64 characters
	// (RFC 5280's ub-organization-name).
	maxGroup = 64
	// BindingComponent is the component label of a Kubeconfig's ClusterRoleBindings.
	BindingComponent = "kubeconfig-binding"
	// NamespaceLabel carries the host namespace of the Kubeconfig a ClusterRoleBinding is for.
	NamespaceLabel = "operator.kcp.io/kubeconfig-namespace"
	// OwnerAnnotation says, as namespace/name, which Kubeconfig a ClusterRoleBinding is for,
	// in full even where a name or label had to be shortened.
	OwnerAnnotation = "operator.kcp.io/kubeconfig"
	// bindingPrefix starts the name of every ClusterRoleBinding of a Kubeconfig.
	bindingPrefix = "kcp-setups:kubeconfig:"
	// maxBindingName is the longest binding name: a DNS subdomain's, the longest name of most kinds.
	maxBindingName = 253
	// hashLen is how much of a SHA-256 in hex a shortened name or label keeps: 128 bits.
	hashLen = 32
)

// Group is the group a Kubeconfig's bindings name, kubeconfig:<namespace>:<name>: its
// certificate carries it whenever spec.authorization is set. It is not the username, so that
// a Kubeconfig's grants stay its own even where another credential has the same username, and
// it has the namespace, so that a Kubeconfig of the same name in another namespace (whose
// bindings may be in the same workspace) is another group. Namespaces and names are DNS
// labels, without ':', so no two Kubeconfigs share it; one longer than a certificate holds
// keeps its head and ends with a hash of the whole.
func Group(kc *operatorv1alpha1.Kubeconfig) string {
	return shorten(GroupPrefix+kc.Namespace+":"+kc.Name, maxGroup)
}

// BindingWorkspace is the workspace path or logical cluster a Kubeconfig's bindings are
// created in: kcp-operator's deprecated clusterRoleBindings.cluster when set (validation
// allows it only with the default targetWorkspace), else targetWorkspace, else root. It is
// empty without spec.authorization: nothing is bound anywhere.
func BindingWorkspace(kc *operatorv1alpha1.Kubeconfig) string {
	a := kc.Spec.Authorization
	switch {
	case a == nil:
		return ""
	case a.ClusterRoleBindings.Cluster != "":
		return a.ClusterRoleBindings.Cluster
	case kc.Spec.TargetWorkspace != "":
		return kc.Spec.TargetWorkspace
	}
	return "root"
}

// Bindings builds the ClusterRoleBindings of a Kubeconfig, one per ClusterRole of
// spec.authorization in its order, each binding the ClusterRole to Group. None without
// spec.authorization.
func Bindings(kc *operatorv1alpha1.Kubeconfig) []*rbacv1ac.ClusterRoleBindingApplyConfiguration {
	a := kc.Spec.Authorization
	if a == nil {
		return nil
	}
	var bindings []*rbacv1ac.ClusterRoleBindingApplyConfiguration
	var seen []string
	for _, role := range a.ClusterRoleBindings.ClusterRoles {
		// Validation refuses a role twice; a second binding of the same name would be the same.
		if slices.Contains(seen, role) {
			continue
		}
		seen = append(seen, role)
		bindings = append(bindings, rbacv1ac.ClusterRoleBinding(BindingName(kc, role)).
			WithLabels(bindingLabels(kc)).
			WithAnnotations(map[string]string{OwnerAnnotation: kc.Namespace + "/" + kc.Name}).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(role)).
			WithSubjects(rbacv1ac.Subject().WithAPIGroup(rbacv1.GroupName).WithKind(rbacv1.GroupKind).WithName(Group(kc))))
	}
	return bindings
}

// BindingName is the name of the ClusterRoleBinding of a Kubeconfig for role:
// kcp-setups:kubeconfig:<namespace>:<name>:<role>. Namespaces and Kubeconfig names are DNS
// labels, without ':', so no two Kubeconfigs or roles share a name. A name longer than kcp
// stores keeps its head and ends with a hash of the whole.
func BindingName(kc *operatorv1alpha1.Kubeconfig, role string) string {
	return shorten(bindingPrefix+kc.Namespace+":"+kc.Name+":"+role, maxBindingName)
}

// BindingSelector selects exactly the ClusterRoleBindings Bindings builds for a Kubeconfig,
// whichever roles it binds now or bound before: what a controller lists to delete the
// bindings of roles the spec dropped, or all of them when the Kubeconfig goes.
func BindingSelector(kc *operatorv1alpha1.Kubeconfig) string {
	return labels.SelectorFromSet(bindingLabels(kc)).String()
}

// bindingLabels are the labels of a Kubeconfig's ClusterRoleBindings: the house's owner
// labels, and the host namespace, since a workspace may hold bindings of Kubeconfigs of the
// same name from several namespaces.
func bindingLabels(kc *operatorv1alpha1.Kubeconfig) map[string]string {
	l := pki.Labels(Kind, shorten(kc.Name, validation.LabelValueMaxLength), BindingComponent)
	l[NamespaceLabel] = shorten(kc.Namespace, validation.LabelValueMaxLength)
	return l
}

// shorten returns s when it has at most limit characters, else its head and a hash of the
// whole, limit characters in all. The hash is hex, so a shortened label value still ends with
// an alphanumeric character.
func shorten(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return s[:limit-hashLen-1] + "-" + hex.EncodeToString(sum[:])[:hashLen]
}
