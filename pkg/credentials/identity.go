package credentials

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Identity is who a credential says its holder is: the certificate's CN and O.
type Identity struct {
	Username string
	Groups   []string
}

// Resolve returns the identity to mint for requester when asked for username and groups.
// With neither, it is the requester: its name, and its groups without
// system:authenticated, which every authenticated user has anyway. Otherwise it is exactly
// what was asked, and any username other than the requester's and any group the requester
// is not in needs the impersonate permission on it, asked of authz. Without it the answer
// is 403 Forbidden naming what is missing; qualifiedResource names what was asked of.
func Resolve(ctx context.Context, authz authorizer.Authorizer, requester user.Info, username string, groups []string,
	qualifiedResource schema.GroupResource, name string) (Identity, error) {
	if username == "" && len(groups) == 0 {
		own := slices.DeleteFunc(slices.Clone(requester.GetGroups()), func(g string) bool { return g == user.AllAuthenticated })
		return Identity{Username: requester.GetName(), Groups: own}, nil
	}
	id := Identity{Username: username, Groups: groups}
	if id.Username == "" {
		id.Username = requester.GetName()
	}
	var missing []string
	// As kube-apiserver's impersonation filter: an authorizer error denies.
	check := func(resource, value string) {
		if resource == "users" && value == requester.GetName() || resource == "groups" && slices.Contains(requester.GetGroups(), value) {
			return
		}
		decision, err := authorizer.DecisionDeny, error(nil)
		if authz != nil {
			decision, _, err = authz.Authorize(ctx, authorizer.AttributesRecord{
				User: requester, Verb: "impersonate", Resource: resource, Name: value, ResourceRequest: true,
			})
		}
		if decision != authorizer.DecisionAllow {
			what := fmt.Sprintf("impersonate on %s %q", resource, value)
			if err != nil {
				what += fmt.Sprintf(" (%v)", err)
			}
			missing = append(missing, what)
		}
	}
	check("users", id.Username)
	for _, g := range id.Groups {
		check("groups", g)
	}
	if len(missing) > 0 {
		return Identity{}, apierrors.NewForbidden(qualifiedResource, name,
			fmt.Errorf("user %q may not mint a credential for another identity without %s", requester.GetName(), strings.Join(missing, ", ")))
	}
	return id, nil
}
