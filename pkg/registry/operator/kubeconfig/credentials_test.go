package kubeconfig

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// grants is a fake delegated authorizer that allows exactly the listed "verb resource.group
// name" questions (any name when the entry ends in " *"), and records every question but the
// target's use, which is another test's.
type grants struct {
	allowed map[string]bool
	asked   []string
}

func allow(rules ...string) *grants {
	g := &grants{allowed: map[string]bool{}}
	for _, r := range rules {
		g.allowed[r] = true
	}
	return g
}

func (g *grants) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetVerb() == "use" {
		return authorizer.DecisionAllow, "", nil
	}
	q := a.GetVerb() + " " + a.GetResource() + "." + a.GetAPIGroup()
	g.asked = append(g.asked, q+" "+a.GetName()+" in "+a.GetNamespace())
	if g.allowed[q+" "+a.GetName()] || g.allowed[q+" *"] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func check(t *testing.T, requester string, g *grants, obj, old *operator.Kubeconfig) error {
	t.Helper()
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: requester, Groups: []string{user.AllAuthenticated}})
	if old == nil {
		return store.CheckRequest(ctx, &Kind, authorizer.AuthorizerFunc(g.Authorize), obj, nil)
	}
	return store.CheckRequest(ctx, &Kind, authorizer.AuthorizerFunc(g.Authorize), obj, old)
}

func requireForbidden(t *testing.T, err error, contains ...string) {
	t.Helper()
	require.Error(t, err)
	var status apierrors.APIStatus
	require.ErrorAs(t, err, &status)
	assert.EqualValues(t, http.StatusForbidden, status.Status().Code, "%v", err)
	for _, s := range contains {
		assert.Contains(t, err.Error(), s)
	}
}

const (
	bindRoles      = "bind clusterroles.rbac.authorization.k8s.io *"
	impersonateAll = "impersonate users. *"
)

// TestBindingNeedsBindOnTheWorkspace: spec.authorization asks bind on
// workspaces.operator.kcp.io named by the workspace path, so that a grant of bind on a role
// (here on every role) binds it only in the workspaces RBAC names.
func TestBindingNeedsBindOnTheWorkspace(t *testing.T) {
	const onTeamA = "bind workspaces.operator.kcp.io root:team-a"

	g := allow(bindRoles, onTeamA)
	require.NoError(t, check(t, "mallory", g, bound("root:team-a", "admin"), nil))
	assert.Equal(t, []string{"bind workspaces.operator.kcp.io root:team-a in team-a", "bind clusterroles.rbac.authorization.k8s.io admin in team-a"}, g.asked)

	for name, kc := range map[string]*operator.Kubeconfig{
		"root":                       bound("root", "admin"),
		"root by default":            bound("", "admin"),
		"a workspace below team-a's": bound("root:team-a:sub", "admin"),
	} {
		t.Run(name, func(t *testing.T) {
			ws, fld := bindingWorkspace(&kc.Spec)
			assert.Equal(t, "spec.targetWorkspace", fld.String())
			requireForbidden(t, check(t, "mallory", allow(bindRoles, onTeamA), kc, nil),
				`spec.targetWorkspace to the workspace `+ws+` of spec.authorization's ClusterRoleBindings without bind on workspaces.operator.kcp.io "`+ws+`" in namespace "team-a"`)
		})
	}

	t.Run("the deprecated cluster", func(t *testing.T) {
		kc := bound("root", "admin")
		kc.Spec.Authorization.ClusterRoleBindings.Cluster = "root:team-a"
		require.NoError(t, check(t, "mallory", allow(bindRoles, onTeamA), kc, nil))
		kc.Spec.Authorization.ClusterRoleBindings.Cluster = "root:team-b"
		requireForbidden(t, check(t, "mallory", allow(bindRoles, onTeamA), kc, nil),
			`spec.authorization.clusterRoleBindings.cluster to the workspace root:team-b`)
	})

	t.Run("moving the bindings asks again", func(t *testing.T) {
		requireForbidden(t, check(t, "mallory", allow(bindRoles, onTeamA), bound("root", "admin"), bound("root:team-a", "admin")),
			`bind on workspaces.operator.kcp.io "root"`)
	})

	t.Run("the workspace alone binds no role", func(t *testing.T) {
		requireForbidden(t, check(t, "mallory", allow(onTeamA), bound("root:team-a", "admin"), nil),
			`bind on clusterroles.rbac.authorization.k8s.io "admin"`)
	})

	t.Run("no authorization, nothing asked", func(t *testing.T) {
		g := allow()
		require.NoError(t, check(t, "mallory", g, bound("root"), nil))
		assert.Empty(t, g.asked)
	})
}

// platformAdmins is a Kubeconfig an admin made for a group mallory is not in.
func platformAdmins() *operator.Kubeconfig {
	kc := bound("root:team-a")
	kc.Spec.Username, kc.Spec.Groups = "platform-bot", []string{"platform-admins"}
	return kc
}

// TestTheIdentityRuleRerunsOnEverySpecChange: whoever changes any field of a Kubeconfig's spec
// keeps a credential of its identity alive, so is held to the identity rule; a change of
// metadata alone or of nothing is not.
func TestTheIdentityRuleRerunsOnEverySpecChange(t *testing.T) {
	for name, change := range map[string]func(*operator.Kubeconfig){
		"validity":            func(kc *operator.Kubeconfig) { kc.Spec.Validity = metav1.Duration{Duration: 87600 * time.Hour} },
		"secretRef":           func(kc *operator.Kubeconfig) { kc.Spec.SecretRef.Name = "mallorys-secret" },
		"certificateTemplate": func(kc *operator.Kubeconfig) { kc.Spec.CertificateTemplate = &operator.CertificateTemplate{} },
		"targetWorkspace":     func(kc *operator.Kubeconfig) { kc.Spec.TargetWorkspace = "root:mallory" },
		"target":              func(kc *operator.Kubeconfig) { kc.Spec.Target.RootShardRef.Name = "other" },
		"username":            func(kc *operator.Kubeconfig) { kc.Spec.Username = "platform-bot-2" },
		"groups":              func(kc *operator.Kubeconfig) { kc.Spec.Groups = []string{"platform-admins", "more"} },
	} {
		t.Run(name, func(t *testing.T) {
			old := platformAdmins()
			kc := old.DeepCopy()
			change(kc)
			requireForbidden(t, check(t, "mallory", allow(), kc, old), `user "mallory" may not mint a credential for another identity`)
			require.NoError(t, check(t, "admin", allow(impersonateAll, "impersonate groups. *"), kc, old), "one who may impersonate it may")
		})
	}

	for name, change := range map[string]func(*operator.Kubeconfig){
		"nothing":     func(*operator.Kubeconfig) {},
		"labels":      func(kc *operator.Kubeconfig) { kc.Labels = map[string]string{"team": "a"} },
		"finalizers":  func(kc *operator.Kubeconfig) { kc.Finalizers = nil },
		"annotations": func(kc *operator.Kubeconfig) { kc.Annotations = map[string]string{"note": "x"} },
		"status":      func(kc *operator.Kubeconfig) { kc.Status.Phase = operator.KubeconfigPhaseReady },
	} {
		t.Run("metadata: "+name, func(t *testing.T) {
			old := platformAdmins()
			old.Finalizers = []string{"operator.kcp.io/cleanup"}
			kc := old.DeepCopy()
			change(kc)
			g := allow()
			require.NoError(t, check(t, "mallory", g, kc, old))
			assert.Empty(t, g.asked)
		})
	}
}

// TestSkipKcpCleanupNeedsTheRightsOfLeavingTheBindings: the annotation that leaves a
// Kubeconfig's bindings in kcp on deletion may become "true" only for one who may delete the
// Kubeconfig and bind its roles in its workspace; an editor with neither gets a 403 naming the
// annotation.
func TestSkipKcpCleanupNeedsTheRightsOfLeavingTheBindings(t *testing.T) {
	const annotation = operatorv1alpha1.AnnotationSkipKcpCleanup
	const (
		deleteIt = "delete kubeconfigs.operator.kcp.io ci"
		bindWS   = "bind workspaces.operator.kcp.io root:team-a"
		bindView = "bind clusterroles.rbac.authorization.k8s.io view"
	)
	skipping := func(kc *operator.Kubeconfig) *operator.Kubeconfig {
		kc = kc.DeepCopy()
		kc.Annotations = map[string]string{annotation: "true"}
		return kc
	}
	stored := bound("root:team-a", "view")

	err := check(t, "mallory", allow(), skipping(stored), stored)
	requireForbidden(t, err, `user "mallory" may not set the annotation operator.kcp.io/skip-kcp-cleanup to "true" without`,
		`delete on kubeconfigs.operator.kcp.io "ci"`, `bind on workspaces.operator.kcp.io "root:team-a"`,
		`bind on clusterroles.rbac.authorization.k8s.io "view"`, `in namespace "team-a"`, "ClusterRoleBindings in kcp")

	requireForbidden(t, check(t, "mallory", allow(bindWS, bindView), skipping(stored), stored), `without delete on kubeconfigs.operator.kcp.io "ci"`)
	requireForbidden(t, check(t, "mallory", allow(deleteIt, bindView), skipping(stored), stored), `without bind on workspaces.operator.kcp.io "root:team-a"`)
	require.NoError(t, check(t, "mallory", allow(deleteIt, bindWS, bindView), skipping(stored), stored))

	t.Run("the stored bindings count, not only the new ones", func(t *testing.T) {
		kc := skipping(bound("root:team-a"))
		err := check(t, "mallory", allow(deleteIt, bindWS), kc, stored)
		requireForbidden(t, err, `bind on clusterroles.rbac.authorization.k8s.io "view"`)
		assert.NotContains(t, err.Error(), "may not mint", "mallory's own identity")
	})
	t.Run("on create", func(t *testing.T) {
		requireForbidden(t, check(t, "mallory", allow(bindWS, bindView), skipping(stored), nil), "operator.kcp.io/skip-kcp-cleanup")
	})
	t.Run("without authorization, delete alone", func(t *testing.T) {
		plain := bound("root:team-a")
		requireForbidden(t, check(t, "mallory", allow(), skipping(plain), plain), `without delete on kubeconfigs.operator.kcp.io "ci"`)
		require.NoError(t, check(t, "mallory", allow(deleteIt), skipping(plain), plain))
	})
	t.Run("kept, removed or another value asks nothing", func(t *testing.T) {
		for _, pair := range [][2]*operator.Kubeconfig{
			{skipping(stored), skipping(stored)},
			{stored, skipping(stored)},
			{func() *operator.Kubeconfig {
				kc := stored.DeepCopy()
				kc.Annotations = map[string]string{annotation: "false"}
				return kc
			}(), stored},
		} {
			g := allow()
			require.NoError(t, check(t, "mallory", g, pair[0], pair[1]))
			assert.Empty(t, g.asked)
		}
	})
}

// TestMaxValidityIsTheServers: a validity above the maximum is accepted with a warning that
// names the maximum the certificate is issued for: Options' Kind the configured one, Kind the
// default.
func TestMaxValidityIsTheServers(t *testing.T) {
	kc := bound("root:team-a")
	kc.Spec.Validity = metav1.Duration{Duration: 8766 * time.Hour}
	assert.Empty(t, Kind.Validate(kc), "kcp-operator's samples ask for 8766h")
	warnings := Kind.Warnings(kc)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "spec.validity: 8766h0m0s is above the server's maximum (--max-kubeconfig-validity): the certificate is issued for 720h0m0s")

	kind := Options{MaxValidity: 2000 * time.Hour}.Kind()
	kc.Spec.Validity.Duration = 2000 * time.Hour
	assert.Empty(t, kind.Validate(kc))
	assert.Empty(t, kind.Warnings(kc), "at the maximum")
	kc.Spec.Validity.Duration = 2001 * time.Hour
	assert.Empty(t, kind.Validate(kc))
	warnings = kind.Warnings(kc)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "the certificate is issued for 2000h0m0s")
	kc.ResourceVersion = "1"
	old := kc.DeepCopy()
	old.Spec.Validity.Duration = time.Hour
	assert.Empty(t, kind.ValidateUpdate(kc, old), "an update that stretches it is accepted too")
	assert.Empty(t, Kind.Warnings(bound("root:team-a")), "Kind itself warns of nothing else")
}
