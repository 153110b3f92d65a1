package link

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// VerbLink is the custom verb on a RootShard that lets a user declare a remote consumer of
// it: a Link admits a member into the installation, which gets identities from the
// RootShard's CAs over the link. RBAC grants it like any verb (kcp-setups-link), with
// resourceNames for one RootShard only; kcp-setups-edit and kcp-setups-admin do not.
const VerbLink = "link"

// LinkPermission is what a Link asks of the authorizer: link on the RootShard it names, in
// its namespace.
func LinkPermission(l *operator.Link) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		Verb: VerbLink, APIGroup: operator.GroupName, Resource: "rootshards",
		Namespace: l.Namespace, Name: l.Spec.RootShardRef.Name, ResourceRequest: true,
	}
}

// admit allows a create, or an update that changes the spec, only to a requester the
// authorizer allows link on the RootShard; an update of the metadata alone (labels, the
// controllers' finalizer) asks nothing. As the store's permissions do, an authorizer error
// denies, and the 403 says why.
func admit(ctx context.Context, authz authorizer.Authorizer, requester user.Info, l, old *operator.Link) error {
	if old != nil && apiequality.Semantic.DeepEqual(l.Spec, old.Spec) {
		return nil
	}
	attrs := LinkPermission(l)
	attrs.User = requester
	decision, reason, err := authorizer.DecisionDeny, "", error(nil)
	if authz != nil {
		decision, reason, err = authz.Authorize(ctx, attrs)
	}
	if decision == authorizer.DecisionAllow {
		return nil
	}
	why := ""
	switch {
	case err != nil:
		why = fmt.Sprintf(" (could not be checked: %v)", err)
	case reason != "":
		why = fmt.Sprintf(" (%s)", reason)
	}
	return apierrors.NewForbidden(operator.Resource("links"), l.Name, fmt.Errorf(
		"user %q may not set spec.rootShardRef to RootShard/%s without %s on rootshards.%s %q in namespace %q%s: "+
			"a Link admits a member into the installation; kcp-setups-link grants it, kcp-setups-edit does not",
		requester.GetName(), attrs.Name, VerbLink, operator.GroupName, attrs.Name, attrs.Namespace, why))
}
