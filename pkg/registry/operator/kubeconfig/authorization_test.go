package kubeconfig

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// binder is a fake delegated authorizer that allows bind on the listed ClusterRoles and
// records every question as "verb resource.group name in namespace".
type binder struct {
	roles map[string]bool
	err   error
	asked []string
}

func (b *binder) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetVerb() == store.VerbUse {
		// The target's use is another test's (TestTargetNeedsUse).
		return authorizer.DecisionAllow, "", nil
	}
	if a.GetResource() == WorkspacesResource {
		// The workspace's bind is another test's (TestBindingNeedsBindOnTheWorkspace).
		return authorizer.DecisionAllow, "", nil
	}
	b.asked = append(b.asked, a.GetVerb()+" "+a.GetResource()+"."+a.GetAPIGroup()+" "+a.GetName()+" in "+a.GetNamespace())
	if b.err != nil {
		return authorizer.DecisionNoOpinion, "", b.err
	}
	if a.GetVerb() == "bind" && a.GetResource() == "clusterroles" && a.GetAPIGroup() == "rbac.authorization.k8s.io" && b.roles[a.GetName()] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "no RBAC rule", nil
}

// bound is a Kubeconfig of mallory's own identity, so that the identity rule asks nothing,
// binding roles in workspace, with no authorization when roles is nil.
func bound(workspace string, roles ...string) *operator.Kubeconfig {
	kc := &operator.Kubeconfig{ObjectMeta: metav1.ObjectMeta{Name: "ci", Namespace: "team-a"},
		Spec: operator.KubeconfigSpec{
			Target:          operator.KubeconfigTarget{RootShardRef: &corev1.LocalObjectReference{Name: "root"}},
			TargetWorkspace: workspace,
			Username:        "mallory",
			Validity:        metav1.Duration{Duration: 24 * time.Hour},
			SecretRef:       corev1.LocalObjectReference{Name: "ci-kubeconfig"},
		}}
	if roles != nil {
		kc.Spec.Authorization = &operator.KubeconfigAuthorization{
			ClusterRoleBindings: operator.KubeconfigClusterRoleBindings{ClusterRoles: roles}}
	}
	return kc
}

func TestBindingRolesNeedsBind(t *testing.T) {
	const rolePath = "spec.authorization.clusterRoleBindings.clusterRoles"
	bind := func(role string) string { return "bind clusterroles.rbac.authorization.k8s.io " + role + " in team-a" }
	longerValidity := bound("root:team-a", "view")
	longerValidity.Spec.Validity.Duration = 48 * time.Hour
	deprecatedCluster := bound("root", "view")
	deprecatedCluster.Spec.Authorization.ClusterRoleBindings.Cluster = "root:legacy"
	tests := []struct {
		name     string
		obj, old *operator.Kubeconfig
		allow    []string
		authzErr error
		asked    []string
		// forbidden, when set, must occur in the 403's message; empty means allowed.
		forbidden []string
	}{
		{name: "no authorization", obj: bound("root")},
		{name: "allowed", obj: bound("root:team-a", "view", "edit"), allow: []string{"view", "edit"}, asked: []string{bind("view"), bind("edit")}},
		{
			name: "denied", obj: bound("root:team-a", "view", "cluster-admin"), allow: []string{"view"},
			asked: []string{bind("view"), bind("cluster-admin")},
			forbidden: []string{
				`user "mallory" may not set ` + rolePath + `[1] to ClusterRole "cluster-admin" in workspace root:team-a ` +
					`without bind on clusterroles.rbac.authorization.k8s.io "cluster-admin" in namespace "team-a" (no RBAC rule)`,
			},
		},
		{
			name: "the authorizer fails", obj: bound("root:team-a", "view"), allow: []string{"view"}, authzErr: errors.New("webhook down"),
			asked: []string{bind("view")},
			forbidden: []string{
				rolePath + `[0] to ClusterRole "view" in workspace root:team-a: bind on clusterroles.rbac.authorization.k8s.io "view" ` +
					`in namespace "team-a" could not be checked (webhook down)`,
			},
		},
		{name: "unchanged update", obj: bound("root:team-a", "view", "edit"), old: bound("root:team-a", "view", "edit")},
		{name: "an update of another field", obj: longerValidity, old: bound("root:team-a", "view")},
		{name: "a role removed shifts the others", obj: bound("root:team-a", "edit", "view"), old: bound("root:team-a", "view", "admin", "edit")},
		{
			name: "a role added", obj: bound("root:team-a", "view", "cluster-admin", "edit"), old: bound("root:team-a", "view", "edit"),
			asked: []string{bind("cluster-admin")}, forbidden: []string{rolePath + `[1] to ClusterRole "cluster-admin"`},
		},
		{
			name: "a role added, allowed", obj: bound("root:team-a", "view", "admin"), old: bound("root:team-a", "view"), allow: []string{"admin"},
			asked: []string{bind("admin")},
		},
		{
			name: "authorization added", obj: bound("root:team-a", "view"), old: bound("root:team-a"),
			asked: []string{bind("view")}, forbidden: []string{rolePath + `[0] to ClusterRole "view"`},
		},
		{name: "authorization removed", obj: bound("root:team-a"), old: bound("root:team-a", "cluster-admin")},
		{
			name: "the bindings moved to another workspace", obj: bound("root:team-b", "view"), old: bound("root:team-a", "view"),
			asked: []string{bind("view")}, forbidden: []string{`ClusterRole "view" in workspace root:team-b without bind`},
		},
		{
			name: "the deprecated cluster is where they are bound", obj: deprecatedCluster,
			asked: []string{bind("view")}, forbidden: []string{`ClusterRole "view" in workspace root:legacy without bind`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &binder{roles: map[string]bool{}, err: tc.authzErr}
			for _, r := range tc.allow {
				b.roles[r] = true
			}
			ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "mallory"})
			var err error
			if tc.old == nil {
				err = store.CheckRequest(ctx, &Kind, authorizer.AuthorizerFunc(b.Authorize), tc.obj, nil)
			} else {
				err = store.CheckRequest(ctx, &Kind, authorizer.AuthorizerFunc(b.Authorize), tc.obj, tc.old)
			}
			assert.Equal(t, tc.asked, b.asked)
			if len(tc.forbidden) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var status apierrors.APIStatus
			require.ErrorAs(t, err, &status)
			assert.EqualValues(t, http.StatusForbidden, status.Status().Code)
			assert.Contains(t, err.Error(), `kubeconfigs.operator.kcp.io "ci" is forbidden`)
			for _, s := range tc.forbidden {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

// TestBindPermissionsAreContentAddressed holds spec.authorization's permissions to what they
// bind (store's TestEveryPermissionKindIsContentAddressed names it): a role or a workspace
// changed in place is a permission the stored object did not hold, so it is asked again,
// while the same bindings are the same permissions.
func TestBindPermissionsAreContentAddressed(t *testing.T) {
	same := bindPermissions(bound("root:team-a", "view", "edit"))
	assert.Equal(t, same, bindPermissions(bound("root:team-a", "view", "edit")), "the same bindings hold the same permissions")
	for name, kc := range map[string]*operator.Kubeconfig{
		"a role changed in place": bound("root:team-a", "view", "admin"),
		"another workspace":       bound("root:payments", "view", "edit"),
	} {
		t.Run(name, func(t *testing.T) {
			var asked []store.Permission
			for _, p := range bindPermissions(kc) {
				if !slices.Contains(same, p) {
					asked = append(asked, p)
				}
			}
			assert.NotEmpty(t, asked, "the change is not held by the stored bindings")
		})
	}
}
