package credentials

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// impersonators allows impersonate on exactly the listed resource/name pairs, and records
// what it was asked.
type impersonators struct {
	allowed map[string]bool
	asked   []string
}

func (a *impersonators) authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	key := attrs.GetVerb() + " " + attrs.GetResource() + "/" + attrs.GetName()
	a.asked = append(a.asked, key)
	if a.allowed[key] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (a *impersonators) authorizer() authorizer.Authorizer {
	return authorizer.AuthorizerFunc(a.authorize)
}

var resource = schema.GroupResource{Group: "operator.kcp.io", Resource: "rootshards/kubeconfig"}

func TestIdentityIsTheRequesterByDefault(t *testing.T) {
	authz := &impersonators{}
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{"team-a", user.AllAuthenticated}}
	id, err := Resolve(t.Context(), authz.authorizer(), alice, "", nil, resource, "root")
	require.NoError(t, err)
	assert.Equal(t, Identity{Username: "alice", Groups: []string{"team-a"}}, id)
	assert.Empty(t, authz.asked, "minting for oneself needs no permission beyond the subresource's")

	id, err = Resolve(t.Context(), authz.authorizer(), alice, "alice", []string{"team-a"}, resource, "root")
	require.NoError(t, err)
	assert.Equal(t, Identity{Username: "alice", Groups: []string{"team-a"}}, id, "naming oneself is oneself")
	assert.Empty(t, authz.asked)
}

func TestAnotherIdentityNeedsImpersonate(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{"team-a", user.AllAuthenticated}}

	authz := &impersonators{}
	_, err := Resolve(t.Context(), authz.authorizer(), alice, "bob", nil, resource, "root")
	require.True(t, apierrors.IsForbidden(err), "got %v", err)
	assert.ErrorContains(t, err, `impersonate on users "bob"`)

	authz = &impersonators{allowed: map[string]bool{"impersonate users/bob": true}}
	id, err := Resolve(t.Context(), authz.authorizer(), alice, "bob", nil, resource, "root")
	require.NoError(t, err)
	assert.Equal(t, Identity{Username: "bob"}, id, "another user gets only the groups asked for")

	authz = &impersonators{}
	_, err = Resolve(t.Context(), authz.authorizer(), alice, "", []string{"system:masters"}, resource, "root")
	require.True(t, apierrors.IsForbidden(err), "system:masters without impersonate: got %v", err)
	assert.ErrorContains(t, err, `impersonate on groups "system:masters"`)
	assert.Equal(t, []string{"impersonate groups/system:masters"}, authz.asked, "the requester's own name needs no check")

	authz = &impersonators{allowed: map[string]bool{"impersonate users/bob": true}}
	_, err = Resolve(t.Context(), authz.authorizer(), alice, "bob", []string{"team-a", "admins"}, resource, "root")
	require.True(t, apierrors.IsForbidden(err))
	assert.ErrorContains(t, err, `impersonate on groups "admins"`)
	assert.NotContains(t, err.Error(), "team-a", "a group the requester is in needs no impersonate")
}

// TestServiceAccountIsImpersonatedAsKubeAPIServerDoes: a ServiceAccount's username is asked
// as kube-apiserver's impersonation filter asks it, impersonate on serviceaccounts in its
// namespace, and its ServiceAccount groups come with it; any other group is still asked.
func TestServiceAccountIsImpersonatedAsKubeAPIServerDoes(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{"team-a", user.AllAuthenticated}}
	var asked []authorizer.AttributesRecord
	allowCI := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		asked = append(asked, authorizer.AttributesRecord{Verb: a.GetVerb(), APIGroup: a.GetAPIGroup(), Resource: a.GetResource(),
			Namespace: a.GetNamespace(), Name: a.GetName(), ResourceRequest: a.IsResourceRequest()})
		if a.GetVerb() == "impersonate" && a.GetResource() == "serviceaccounts" && a.GetNamespace() == "team-a" && a.GetName() == "ci" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	})

	id, err := Resolve(t.Context(), allowCI, alice, "system:serviceaccount:team-a:ci",
		[]string{"system:serviceaccounts", "system:serviceaccounts:team-a"}, resource, "root")
	require.NoError(t, err)
	assert.Equal(t, Identity{Username: "system:serviceaccount:team-a:ci", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:team-a"}}, id)
	assert.Equal(t, []authorizer.AttributesRecord{{Verb: "impersonate", Resource: "serviceaccounts", Namespace: "team-a", Name: "ci", ResourceRequest: true}}, asked,
		"one check, on the ServiceAccount in its namespace: its groups come with it")

	asked = nil
	_, err = Resolve(t.Context(), allowCI, alice, "system:serviceaccount:team-b:ci", nil, resource, "root")
	require.True(t, apierrors.IsForbidden(err), "got %v", err)
	assert.ErrorContains(t, err, `impersonate on serviceaccounts "ci" in namespace "team-b"`)
	assert.NotContains(t, err.Error(), "users", "a ServiceAccount is not asked as a user")

	// Another namespace's ServiceAccount groups, or any other group, are not implied.
	asked = nil
	_, err = Resolve(t.Context(), allowCI, alice, "system:serviceaccount:team-a:ci",
		[]string{"system:serviceaccounts:team-b", "system:masters"}, resource, "root")
	require.True(t, apierrors.IsForbidden(err), "got %v", err)
	assert.ErrorContains(t, err, `impersonate on groups "system:serviceaccounts:team-b", impersonate on groups "system:masters"`)

	// A user's grant to impersonate the user named like the ServiceAccount is not enough.
	usersOnly := &impersonators{allowed: map[string]bool{"impersonate users/system:serviceaccount:team-a:ci": true}}
	_, err = Resolve(t.Context(), usersOnly.authorizer(), alice, "system:serviceaccount:team-a:ci", nil, resource, "root")
	require.True(t, apierrors.IsForbidden(err), "got %v", err)
	assert.Equal(t, []string{"impersonate serviceaccounts/ci"}, usersOnly.asked)

	// A ServiceAccount minting for itself asks nothing.
	ci := &user.DefaultInfo{Name: "system:serviceaccount:team-a:ci",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:team-a", user.AllAuthenticated}}
	none := &impersonators{}
	id, err = Resolve(t.Context(), none.authorizer(), ci, "", nil, resource, "root")
	require.NoError(t, err)
	assert.Equal(t, Identity{Username: ci.Name, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:team-a"}}, id)
	assert.Empty(t, none.asked)
}
