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
