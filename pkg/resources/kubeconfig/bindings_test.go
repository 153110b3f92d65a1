package kubeconfig

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// binding is a Kubeconfig namespace/name binding roles in workspace, with no authorization
// when roles is nil.
func binding(namespace, name, workspace, cluster string, roles ...string) *operatorv1alpha1.Kubeconfig {
	kc := &operatorv1alpha1.Kubeconfig{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: operatorv1alpha1.KubeconfigSpec{TargetWorkspace: workspace, Username: "ci-bot", Groups: []string{"ci"}}}
	if roles != nil {
		kc.Spec.Authorization = &operatorv1alpha1.KubeconfigAuthorization{ClusterRoleBindings: operatorv1alpha1.KubeconfigClusterRoleBindings{
			Cluster: cluster, ClusterRoles: roles,
		}}
	}
	return kc
}

func TestBindings(t *testing.T) {
	for _, tc := range []struct {
		name      string
		kc        *operatorv1alpha1.Kubeconfig
		bindings  []string
		roles     []string
		workspace string
	}{
		{name: "no authorization", kc: binding("team-a", "ci", "root:team-a", "")},
		{
			name: "one role per binding, in the spec's order", kc: binding("team-a", "ci", "root:team-a", "", "view", "system:kcp:workspace:access"),
			bindings:  []string{"kcp-setups:kubeconfig:team-a:ci:view", "kcp-setups:kubeconfig:team-a:ci:system:kcp:workspace:access"},
			roles:     []string{"view", "system:kcp:workspace:access"},
			workspace: "root:team-a",
		},
		{
			name: "a role twice is one binding", kc: binding("team-a", "ci", "root", "", "view", "view"),
			bindings: []string{"kcp-setups:kubeconfig:team-a:ci:view"}, roles: []string{"view"}, workspace: "root",
		},
		{
			name: "targetWorkspace defaults to root", kc: binding("team-a", "ci", "", "", "view"),
			bindings: []string{"kcp-setups:kubeconfig:team-a:ci:view"}, roles: []string{"view"}, workspace: "root",
		},
		{
			name: "the deprecated cluster", kc: binding("team-a", "ci", "root", "root:legacy", "view"),
			bindings: []string{"kcp-setups:kubeconfig:team-a:ci:view"}, roles: []string{"view"}, workspace: "root:legacy",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Bindings(tc.kc)
			assert.Equal(t, tc.workspace, BindingWorkspace(tc.kc))
			assert.Equal(t, "kubeconfig:team-a:"+tc.kc.Name, Group(tc.kc))
			require.Len(t, got, len(tc.bindings))
			selector, err := labels.Parse(BindingSelector(tc.kc))
			require.NoError(t, err)
			for i, b := range got {
				assert.Equal(t, tc.bindings[i], *b.Name)
				assert.Equal(t, tc.roles[i], *b.RoleRef.Name)
				assert.Equal(t, "ClusterRole", *b.RoleRef.Kind)
				assert.Equal(t, "rbac.authorization.k8s.io", *b.RoleRef.APIGroup)
				require.Len(t, b.Subjects, 1, "the group alone, not the username nor spec.groups")
				assert.Equal(t, "Group", *b.Subjects[0].Kind)
				assert.Equal(t, "rbac.authorization.k8s.io", *b.Subjects[0].APIGroup)
				assert.Equal(t, "kubeconfig:team-a:ci", *b.Subjects[0].Name)
				assert.True(t, selector.Matches(labels.Set(b.Labels)), "the selector selects every binding")
				assert.Equal(t, "kcp-setups", b.Labels["app.kubernetes.io/managed-by"])
				assert.Equal(t, "team-a/ci", b.Annotations[OwnerAnnotation])
			}
		})
	}
}

// TestBindingsOfSameNamedKubeconfigs: two namespaces' Kubeconfigs of the same name may bind
// the same role in one workspace; neither's bindings may be the other's, by name or selector.
func TestBindingsOfSameNamedKubeconfigs(t *testing.T) {
	a, b := binding("team-a", "ci", "root:shared", "", "view"), binding("team-b", "ci", "root:shared", "", "view")
	other := binding("team-a", "ci-2", "root:shared", "", "view")
	bindingA, bindingB, bindingOther := Bindings(a)[0], Bindings(b)[0], Bindings(other)[0]
	assert.NotEqual(t, *bindingA.Name, *bindingB.Name)
	assert.NotEqual(t, *bindingA.Name, *bindingOther.Name)

	selectorA, err := labels.Parse(BindingSelector(a))
	require.NoError(t, err)
	assert.Equal(t, "app.kubernetes.io/component=kubeconfig-binding,app.kubernetes.io/instance=ci,app.kubernetes.io/managed-by=kcp-setups,"+
		"operator.kcp.io/kubeconfig=ci,operator.kcp.io/kubeconfig-namespace=team-a", selectorA.String())
	assert.True(t, selectorA.Matches(labels.Set(bindingA.Labels)))
	assert.False(t, selectorA.Matches(labels.Set(bindingB.Labels)), "another namespace's Kubeconfig of the same name")
	assert.False(t, selectorA.Matches(labels.Set(bindingOther.Labels)), "another Kubeconfig of the namespace")
	assert.False(t, selectorA.Matches(labels.Set{"operator.kcp.io/kubeconfig": "ci", "operator.kcp.io/kubeconfig-namespace": "team-a"}),
		"a binding someone else labelled without the manager")
}

// TestBindingNamesAndLabelsStayShort: a long role makes a long name, and a long name (which
// validation refuses today, a Kubeconfig's name being a DNS label) long label values; both are
// shortened with a hash, stay valid and distinct, and the same input gives the same output.
func TestBindingNamesAndLabelsStayShort(t *testing.T) {
	longRole := strings.Repeat("r", 300)
	for _, tc := range []struct {
		name, kcName, role, otherRole string
	}{
		{name: "a long role", kcName: "ci", role: longRole + "-a", otherRole: longRole + "-b"},
		{name: "a long Kubeconfig name", kcName: strings.Repeat("k", 100), role: "view", otherRole: "edit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kc := binding("team-a", tc.kcName, "root", "", tc.role, tc.otherRole)
			got := Bindings(kc)
			require.Len(t, got, 2)
			for _, b := range got {
				assert.LessOrEqual(t, len(*b.Name), 253)
				assert.Empty(t, path.IsValidPathSegmentName(*b.Name))
				for k, v := range b.Labels {
					assert.Empty(t, validation.IsValidLabelValue(v), "label %s=%s", k, v)
				}
			}
			assert.NotEqual(t, *got[0].Name, *got[1].Name)
			assert.Equal(t, *got[0].Name, *Bindings(kc)[0].Name, "stable")
			_, err := labels.Parse(BindingSelector(kc))
			require.NoError(t, err)
		})
	}
	t.Run("long names that share their head", func(t *testing.T) {
		a, b := binding("team-a", strings.Repeat("k", 99)+"a", "root", "", "view"), binding("team-a", strings.Repeat("k", 99)+"b", "root", "", "view")
		assert.Len(t, Bindings(a)[0].Labels["operator.kcp.io/kubeconfig"], 63)
		assert.NotEqual(t, BindingSelector(a), BindingSelector(b))
		assert.NotEqual(t, *Bindings(a)[0].Name, *Bindings(b)[0].Name)
	})
	t.Run("short enough is kept", func(t *testing.T) {
		name := BindingName(binding("team-a", "ci", "root", "", "view"), strings.Repeat("r", 253-len("kcp-setups:kubeconfig:team-a:ci:")))
		assert.Len(t, name, 253)
		assert.True(t, strings.HasSuffix(name, "rrrr"), "not hashed at exactly the limit")
	})
}

func TestCertificateCarriesTheGroup(t *testing.T) {
	for _, tc := range []struct {
		name   string
		groups []string
		roles  []string
		want   []string
	}{
		{name: "no authorization", groups: []string{"ci"}, want: []string{"ci"}},
		{name: "authorization", groups: []string{"ci"}, roles: []string{"view"}, want: []string{"ci", "kubeconfig:team-a:admin"}},
		{name: "authorization, no groups", roles: []string{"view"}, want: []string{"kubeconfig:team-a:admin"}},
		{name: "the group in spec.groups already", groups: []string{"kubeconfig:team-a:admin", "ci"}, roles: []string{"view"}, want: []string{"kubeconfig:team-a:admin", "ci"}},
		{name: "kcp-operator's group is just a group", groups: []string{"kubeconfig:admin"}, roles: []string{"view"}, want: []string{"kubeconfig:admin", "kubeconfig:team-a:admin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := minimal(t)
			k.Spec.Groups = tc.groups
			if tc.roles != nil {
				k.Spec.Authorization = &operatorv1alpha1.KubeconfigAuthorization{ClusterRoleBindings: operatorv1alpha1.KubeconfigClusterRoleBindings{ClusterRoles: tc.roles}}
			}
			cert := k.Certificate()
			require.NotNil(t, cert.Spec.Subject)
			assert.Equal(t, tc.want, cert.Spec.Subject.Organizations)
			assert.Equal(t, tc.groups, k.Spec.Groups, "the spec is not modified")
		})
	}
}

// TestGroupIsNamespaced: Kubeconfigs of the same name in two namespaces, whose bindings may be
// in one workspace, are two groups; and the group fits a certificate's Organization.
func TestGroupIsNamespaced(t *testing.T) {
	a, b := binding("team-a", "ci", "root", "", "view"), binding("team-b", "ci", "root", "", "view")
	assert.Equal(t, "kubeconfig:team-a:ci", Group(a))
	assert.NotEqual(t, Group(a), Group(b))
	assert.NotEqual(t, *Bindings(a)[0].Subjects[0].Name, *Bindings(b)[0].Subjects[0].Name)

	ns, name := strings.Repeat("n", 63), strings.Repeat("k", 63)
	long := Group(binding(ns, name, "root", "", "view"))
	assert.Len(t, long, 64, "an Organization holds at most 64 characters")
	assert.True(t, strings.HasPrefix(long, "kubeconfig:nnnn"))
	assert.NotEqual(t, long, Group(binding(ns, name[1:], "root", "", "view")), "the hash tells apart what the head does not")
	exact := binding("team-a", strings.Repeat("k", 64-len("kubeconfig:team-a:")), "root", "", "view")
	assert.Equal(t, "kubeconfig:team-a:"+exact.Name, Group(exact), "not hashed at exactly the limit")
}
