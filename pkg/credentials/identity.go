package credentials

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
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
//
// The permissions are kube-apiserver's impersonation filter's: a username of a
// ServiceAccount (system:serviceaccount:<namespace>:<name>) is impersonate on that
// ServiceAccount in its namespace, not on users, so that RBAC grants it as it grants
// impersonating the ServiceAccount (as the edit role does in its namespace); and its groups,
// system:serviceaccounts and system:serviceaccounts:<namespace>, which the filter gives
// whoever impersonates the ServiceAccount, need nothing more. Any other group, system: or not,
// is impersonate on groups.
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
	check := func(attrs authorizer.AttributesRecord, what string) {
		attrs.User, attrs.Verb, attrs.ResourceRequest = requester, "impersonate", true
		decision, err := authorizer.DecisionDeny, error(nil)
		if authz != nil {
			decision, _, err = authz.Authorize(ctx, attrs)
		}
		if decision != authorizer.DecisionAllow {
			what = "impersonate on " + what
			if err != nil {
				what += fmt.Sprintf(" (%v)", err)
			}
			missing = append(missing, what)
		}
	}
	var implied []string
	if id.Username != requester.GetName() {
		if ns, sa, err := serviceaccount.SplitUsername(id.Username); err == nil {
			check(authorizer.AttributesRecord{Resource: "serviceaccounts", Namespace: ns, Name: sa},
				fmt.Sprintf("serviceaccounts %q in namespace %q", sa, ns))
			implied = serviceaccount.MakeGroupNames(ns)
		} else {
			check(authorizer.AttributesRecord{Resource: "users", Name: id.Username}, fmt.Sprintf("users %q", id.Username))
		}
	}
	for _, g := range id.Groups {
		if slices.Contains(requester.GetGroups(), g) || slices.Contains(implied, g) {
			continue
		}
		check(authorizer.AttributesRecord{Resource: "groups", Name: g}, fmt.Sprintf("groups %q", g))
	}
	if len(missing) > 0 {
		return Identity{}, apierrors.NewForbidden(qualifiedResource, name,
			fmt.Errorf("user %q may not mint a credential for another identity without %s", requester.GetName(), strings.Join(missing, ", ")))
	}
	return id, nil
}
