package store

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"
)

// PreviewFunc says what a write of obj (old: the stored object, nil on create) will do in
// the host cluster, as the lines of warnings: the full list when full (a server dry run),
// else a summary (docs/kcp-versions.md, "Previewing a change").
type PreviewFunc func(ctx context.Context, obj, old runtime.Object, full bool) []string

// Preview is the preview of the writes of the setup kinds, bound late: the controllers
// compute it from their caches, which sync after the server serves, and only while they run.
// Until Set, a write's warning says that it is not available yet.
type Preview struct {
	f atomic.Pointer[PreviewFunc]
	// NotAvailable is the warning of a write while no PreviewFunc is set.
	NotAvailable string
	// controllers are the server's own controllers, whose writes (finalizers, a maintenance
	// window's spec.version) nobody reads the warnings of: they are not previewed, so that a
	// reconcile's write plans nothing.
	controllers ControllerIdentity
}

// SkipFor has the writes of u, the controllers' user, go without a preview.
func (p *Preview) SkipFor(u user.Info) { p.controllers.Set(u) }

// Set sets the PreviewFunc; nil unsets it (the controllers stopped).
func (p *Preview) Set(f PreviewFunc) {
	if f == nil {
		p.f.Store(nil)
		return
	}
	p.f.Store(&f)
}

// warn adds the preview of a write to the warnings of its response.
func (p *Preview) warn(ctx context.Context, obj, old runtime.Object, full bool) {
	if u, ok := genericapirequest.UserFrom(ctx); ok && p.controllers.is(u) {
		return
	}
	f := p.f.Load()
	if f == nil {
		if p.NotAvailable != "" {
			warning.AddWarning(ctx, "", p.NotAvailable)
		}
		return
	}
	for _, line := range (*f)(ctx, obj, old, full) {
		warning.AddWarning(ctx, "", line)
	}
}

// SetPreview has every create and update (patch, apply) of the kind, real or a dry run,
// answer with the preview p; it is called before the server serves.
func (r *REST) SetPreview(p *Preview) { r.preview = p }

// previewCreate is next, then the preview of the object created, once next allowed it.
func (r *REST) previewCreate(dryRun []string, next rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	if r.preview == nil {
		return next
	}
	return func(ctx context.Context, obj runtime.Object) error {
		if next != nil {
			if err := next(ctx, obj); err != nil {
				return err
			}
		}
		r.preview.warn(ctx, obj, nil, len(dryRun) > 0)
		return nil
	}
}

// previewUpdate is next, then the preview of the update, once next allowed it.
func (r *REST) previewUpdate(dryRun []string, next rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	if r.preview == nil {
		return next
	}
	return func(ctx context.Context, obj, old runtime.Object) error {
		if next != nil {
			if err := next(ctx, obj, old); err != nil {
				return err
			}
		}
		r.preview.warn(ctx, obj, old, len(dryRun) > 0)
		return nil
	}
}
