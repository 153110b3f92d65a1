package store

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// The controllers act with the server's own rights. A field that has them act on an object
// the author names, or run what the author chooses, is allowed only to an author who could do
// that directly: the server must not be a confused deputy.

// Admit is a kind's own check, after validation, that the requester may ask for what obj
// asks. old is nil on create. Its error reaches the client as is, usually a 403 Forbidden.
type Admit[T Object] func(ctx context.Context, authz authorizer.Authorizer, requester user.Info, obj, old T) error

// Permission is something a field has the server do with its own rights, and so what the
// requester must be allowed to do directly, in the object's namespace, to set the field.
type Permission struct {
	// Field is the path of the field that asks for it; Value is what the field names.
	Field, Value string
	// Verb, Group, Resource, Subresource and Name are asked of the authorizer.
	Verb, Group, Resource, Subresource, Name string
	// Digest, when set, stands for the content of the field (ChangeOf): a permission is held
	// from the stored object only with the same digest, so a change asks it again.
	Digest string
}

// String says what the permission is, for a 403's message.
func (p Permission) String() string {
	s := p.Verb + " on " + p.Resource
	if p.Subresource != "" {
		s += "/" + p.Subresource
	}
	if p.Group != "" {
		s += "." + p.Group
	}
	if p.Name != "" {
		s += fmt.Sprintf(" %q", p.Name)
	}
	return s
}

// requirePermissions asks the authorizer, for requester, every permission in need that had
// does not hold (so that an unrelated edit of an object is not held to what its author was
// granted), and refuses with a 403 naming each missing one. As kube-apiserver's impersonation
// filter and RBAC's escalation check do, an authorizer error denies; the 403 then says that
// the permission could not be checked, and why.
func requirePermissions(ctx context.Context, authz authorizer.Authorizer, requester user.Info, namespace string,
	need, had []Permission, qualifiedResource schema.GroupResource, name string) error {
	type answer struct {
		decision authorizer.Decision
		reason   string
		err      error
	}
	// Two fields may need one right (a FrontProxy's rootShard.ref and its auth both use the
	// RootShard): the authorizer is asked once for it, and each field is named.
	answers := map[[5]string]answer{}
	var missing []string
	for _, p := range need {
		if heldBefore(p, had) {
			continue
		}
		key := [5]string{p.Verb, p.Group, p.Resource, p.Subresource, p.Name}
		a, asked := answers[key]
		if !asked {
			a.decision = authorizer.DecisionDeny
			if authz != nil {
				a.decision, a.reason, a.err = authz.Authorize(ctx, authorizer.AttributesRecord{
					User: requester, Verb: p.Verb, APIGroup: p.Group, Resource: p.Resource, Subresource: p.Subresource,
					Namespace: namespace, Name: p.Name, ResourceRequest: true,
				})
			}
			answers[key] = a
		}
		decision, reason, err := a.decision, a.reason, a.err
		if decision == authorizer.DecisionAllow {
			continue
		}
		if err != nil {
			missing = append(missing, fmt.Sprintf("%s to %s: %s in namespace %q could not be checked (%v)", p.Field, p.Value, p, namespace, err))
			continue
		}
		what := fmt.Sprintf("%s to %s without %s in namespace %q", p.Field, p.Value, p, namespace)
		if reason != "" {
			what += fmt.Sprintf(" (%s)", reason)
		}
		missing = append(missing, what)
	}
	if len(missing) == 0 {
		return nil
	}
	return apierrors.NewForbidden(qualifiedResource, name,
		fmt.Errorf("user %q may not set %s: the server would act with its own rights; "+
			"be granted those rights in the namespace (kcp-setups-edit grants use on the setups), or leave those fields out", requester.GetName(), strings.Join(missing, "; ")))
}

// RequirePermissions asks the authorizer every permission in need that had does not hold,
// for the requester of ctx, as a kind's Admit does: for a check that reads other objects to
// know what a field makes the server do (store.Neighbours). Without a requester (the
// server's authentication off) it allows, as the admitter does.
func RequirePermissions(ctx context.Context, authz authorizer.Authorizer, namespace string, need, had []Permission,
	qualifiedResource schema.GroupResource, name string) error {
	requester, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return nil
	}
	return requirePermissions(ctx, authz, requester, namespace, need, had, qualifiedResource, name)
}

// listIndex is a list index in a field path, such as the [1] of clusterRoles[1].
var listIndex = regexp.MustCompile(`\[[0-9]+\]`)

// heldBefore reports whether had, the stored object's permissions, holds p: the same right
// for the same content, which each permission carries in its Value, or in its Digest where
// the Value shows less than the content (the keys of a template's labels, a volume's driver),
// so a change of anything under a held field asks again (TestEveryPermissionKindIsContentAddressed).
// Where a value stands in a list does not matter: removing or reordering list items shifts
// the indices of the rest, and what is asked for stays the same, so it is not asked again.
func heldBefore(p Permission, had []Permission) bool {
	p.Field = listIndex.ReplaceAllString(p.Field, "[]")
	return slices.ContainsFunc(had, func(h Permission) bool {
		h.Field = listIndex.ReplaceAllString(h.Field, "[]")
		return h == p
	})
}

// admitter wraps a request's validation with the kind's Admit, and with nothing when the kind
// has none.
type admitter struct {
	check func(ctx context.Context, obj, old runtime.Object) error
}

// newAdmitter returns the admitter of kind, which asks authz.
func newAdmitter[T Object, Spec, Status any](kind *Kind[T, Spec, Status], authz authorizer.Authorizer) admitter {
	return admitter{check: func(ctx context.Context, obj, old runtime.Object) error {
		requester, ok := genericapirequest.UserFrom(ctx)
		if !ok {
			// Every request that passed authentication, even an anonymous one, has a user;
			// only a server whose authentication is off has none, and allows everything, as
			// the library does. This server turns it off only in the integration tier.
			return nil
		}
		o, ok := obj.(T)
		if !ok {
			return apierrors.NewInternalError(fmt.Errorf("not a %s: %T", kind.Singular, obj))
		}
		var prev T
		if old != nil {
			if prev, ok = old.(T); !ok {
				return apierrors.NewInternalError(fmt.Errorf("not a %s: %T", kind.Singular, old))
			}
		}
		if kind.Admit != nil {
			if err := kind.Admit(ctx, authz, requester, o, prev); err != nil {
				return err
			}
		}
		permissions := func(o T) []Permission {
			perms := append(AdoptPermissions(o), EtcdVolumesPermissions(o)...)
			if kind.Permissions != nil {
				perms = append(kind.Permissions(o), perms...)
			}
			return perms
		}
		var had []Permission
		if old != nil {
			had = permissions(prev)
		}
		return requirePermissions(ctx, authz, requester, o.GetNamespace(), permissions(o), had, kind.Resource, o.GetName())
	}}
}

// CheckRequest runs on obj what the kind's REST runs after validation: the kind's Admit and
// Permissions, asked of authz for the requester in ctx. old is nil on create. It lets each
// kind's tests hold its own wiring to the 403 a client gets.
func CheckRequest[T Object, Spec, Status any](ctx context.Context, kind *Kind[T, Spec, Status], authz authorizer.Authorizer, obj, old runtime.Object) error {
	a := newAdmitter(kind, authz)
	if a.check == nil {
		return nil
	}
	return a.check(ctx, obj, old)
}

// create runs next, then the check.
func (a admitter) create(next rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	if a.check == nil {
		return next
	}
	return func(ctx context.Context, obj runtime.Object) error {
		if next != nil {
			if err := next(ctx, obj); err != nil {
				return err
			}
		}
		return a.check(ctx, obj, nil)
	}
}

// update runs next, then the check against the stored object.
func (a admitter) update(next rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	if a.check == nil {
		return next
	}
	return func(ctx context.Context, obj, old runtime.Object) error {
		if next != nil {
			if err := next(ctx, obj, old); err != nil {
				return err
			}
		}
		return a.check(ctx, obj, old)
	}
}
