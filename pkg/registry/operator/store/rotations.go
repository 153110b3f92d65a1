package store

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
)

// The controllers delete a CA's old slot, and trust its new one, by what status.rotations
// says, so a step of a rotation is taken only by whom it belongs to: Start and Complete by
// the rotation subresource, on a request its RBAC allowed; every other step by the server's
// own controllers, whose identity is the server's loopback user. A writer of the status
// subresource is neither, and may not take a step (a 403 at status.rotations[i].phase); a
// change that is no step is a 422 (validation.RotationSteps).

// ControllerIdentity is the user the server's controllers write our kinds as: the loopback
// user of the server, system:apiserver with a UID of the process's own. It is set once the
// server knows it; while unset, no one takes the controllers' steps.
type ControllerIdentity struct {
	user atomic.Pointer[user.DefaultInfo]
}

// Set records the controllers' user.
func (c *ControllerIdentity) Set(u user.Info) {
	c.user.Store(&user.DefaultInfo{Name: u.GetName(), UID: u.GetUID()})
}

// is reports whether u is the controllers' user: the same name and UID. The UID is the
// process's own, never shown, so a user of the host cluster named system:apiserver is not.
func (c *ControllerIdentity) is(u user.Info) bool {
	want := c.user.Load()
	return want != nil && want.UID != "" && u.GetName() == want.Name && u.GetUID() == want.UID
}

type rotationRequestKey struct{}

// WithRotationRequest marks ctx as the rotation subresource's write of a step it took, on a
// request that RBAC allowed (create on <resource>/rotation): the status subresource lets it
// take Start and Complete. Only code in the server can set it.
func WithRotationRequest(ctx context.Context) context.Context {
	return context.WithValue(ctx, rotationRequestKey{}, true)
}

func isRotationRequest(ctx context.Context) bool {
	v, _ := ctx.Value(rotationRequestKey{}).(bool)
	return v
}

// statusCheck is the status subresource's check, after validation, that the requester may
// change each ServerWritten part of the status the write changes, and take each step of
// status.rotations the write takes.
type statusCheck struct {
	resource   string
	controller *ControllerIdentity
	rotations  func(obj runtime.Object) ([]operator.CARotationState, bool)
	// serverWritten are the kind's ServerWritten parts of the status.
	serverWritten []serverWrittenCheck
}

// serverWrittenCheck is a part of the status only the controllers' user changes, and the
// subresource of its name, when it has one.
type serverWrittenCheck struct {
	path, why, subresource string
	changed                func(obj, old runtime.Object) bool
}

type subresourceWriteKey struct{}

// WithSubresourceWrite marks ctx as the write of a create subresource (backup) into the
// status, on a request that RBAC allowed (create on <resource>/<subresource>): the status
// subresource lets it change the ServerWritten parts that name it. Only code in the server
// can set it.
func WithSubresourceWrite(ctx context.Context, subresource string) context.Context {
	return context.WithValue(ctx, subresourceWriteKey{}, subresource)
}

// WrittenBy reports whether ctx is marked as the write of the subresource named, never of none.
func WrittenBy(ctx context.Context, subresource string) bool {
	v, _ := ctx.Value(subresourceWriteKey{}).(string)
	return subresource != "" && v == subresource
}

func (c statusCheck) check(ctx context.Context, obj, old runtime.Object) error {
	requester, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		// Authentication is off (see newAdmitter).
		return nil
	}
	var refused []string
	for _, w := range c.serverWritten {
		if !w.changed(obj, old) || c.controller.is(requester) || WrittenBy(ctx, w.subresource) {
			continue
		}
		msg := fmt.Sprintf("%s: user %q may not change it: only the server writes %s", w.path, requester.GetName(), w.why)
		if w.subresource != "" {
			msg += fmt.Sprintf(": ask the %s subresource (create on %s/%s)", w.subresource, c.resource, w.subresource)
		}
		refused = append(refused, msg)
	}
	if c.rotations == nil {
		return c.forbidden(obj, refused)
	}
	newRotations, ok1 := c.rotations(obj)
	oldRotations, ok2 := c.rotations(old)
	if !ok1 || !ok2 {
		return apierrors.NewInternalError(fmt.Errorf("not an object of %s: %T", c.resource, obj))
	}
	steps, _ := validation.RotationSteps(newRotations, oldRotations, field.NewPath("status", "rotations"))
	for _, s := range steps {
		switch {
		case s.By == validation.RotationController && !c.controller.is(requester):
			refused = append(refused, fmt.Sprintf("%s: user %q may not move the rotation of the %s CA from %s to %s: only the server's controllers take that step",
				s.Path, requester.GetName(), s.Authority, s.From, s.To))
		case s.By == validation.RotationRequest && !isRotationRequest(ctx):
			refused = append(refused, fmt.Sprintf("%s: user %q may not move the rotation of the %s CA from %s to %s through the status: ask the rotation subresource (create on %s/rotation)",
				s.Path, requester.GetName(), s.Authority, s.From, s.To, c.resource))
		}
	}
	return c.forbidden(obj, refused)
}

// forbidden is the 403 of the refusals, nil when there are none.
func (c statusCheck) forbidden(obj runtime.Object, refused []string) error {
	if len(refused) == 0 {
		return nil
	}
	meta, _ := obj.(Object)
	name := ""
	if meta != nil {
		name = meta.GetName()
	}
	return apierrors.NewForbidden(operator.Resource(c.resource), name, fmt.Errorf("%s", strings.Join(refused, "; ")))
}

// update runs next, then the check against the stored object.
func (c statusCheck) update(next rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	return func(ctx context.Context, obj, old runtime.Object) error {
		if next != nil {
			if err := next(ctx, obj, old); err != nil {
				return err
			}
		}
		return c.check(ctx, obj, old)
	}
}
