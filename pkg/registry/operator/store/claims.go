package store

import (
	"context"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// The controllers name what they write in the host cluster after the object, as kcp-operator
// does (<name>-ca, <name>-server, <name>-shard-join, kubeconfig-<name> ...), so two objects
// of a namespace can derive the same name: Shard alpha next to RootShard alpha, Kubeconfig ca
// next to RootShard kubeconfig. kcp-operator's names stay, since its users rely on them;
// instead, an object that would derive a name another object of its namespace derives
// already, of any kind, is refused with a 422 naming that object and the name. Two creates
// at the same moment can both pass; the controllers' NameConflict then keeps each from
// writing the other's objects.

// DerivedName is a host-cluster object name an object derives.
type DerivedName struct {
	// Name is the host object's name.
	Name string
	// Field is the path of the spec field that chose it, such as spec.secretRef.name, or
	// empty when metadata.name did.
	Field string
}

// ClaimingKind is a kind whose objects derive host names: its storage, which the
// namespace's objects are listed from.
type ClaimingKind struct {
	// Kind is the kind's name, such as RootShard, and Resource its resource.
	Kind     string
	Resource schema.GroupResource
	List     rest.Lister
}

// Claims find, among the objects of every kind in a namespace, those that derive a host name
// an object would derive too.
type Claims struct {
	// Derive returns the host names an internal object of any kind derives.
	Derive func(runtime.Object) ([]DerivedName, error)
	// Kinds are every kind's storage.
	Kinds []ClaimingKind

	// derived are the names of the stored objects by namespace, then kind and name, as of
	// their UID and resourceVersion: deriving them is a build of the object's certificates
	// (some 0.1 ms for a RootShard), which a create in a namespace of many objects would
	// otherwise repeat for each.
	mu      sync.Mutex
	derived map[string]map[string]derivedAt

	// index holds the names every stored object derives, kept current by Run; a check
	// answers from it once it is ready (claimindex.go).
	index claimIndex
}

// derivedAt are an object's derived names as of its UID and resourceVersion.
type derivedAt struct {
	uid             types.UID
	resourceVersion string
	names           []DerivedName
}

// SetClaims has the endpoint refuse an object whose derived names another object of its
// namespace derives, and index what it stores at once (Claims.Observe); it is called before
// the server serves.
func (r *REST) SetClaims(c *Claims) {
	r.claims = c
	resource := r.Store.DefaultQualifiedResource.Resource
	r.Store.AfterCreate = func(obj runtime.Object, options *metav1.CreateOptions) {
		if len(options.DryRun) == 0 {
			c.Observe(resource, obj)
		}
	}
	r.Store.AfterUpdate = func(obj runtime.Object, options *metav1.UpdateOptions) {
		if len(options.DryRun) == 0 {
			c.Observe(resource, obj)
		}
	}
	r.Store.AfterDelete = func(obj runtime.Object, options *metav1.DeleteOptions) {
		if len(options.DryRun) == 0 {
			c.Forget(resource, obj)
		}
	}
}

// Claims are the endpoint's claims on derived names, nil without.
func (r *REST) Claims() *Claims { return r.claims }

// claimsCreate runs next, then the claims check of a new object.
func (r *REST) claimsCreate(next rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	if r.claims == nil {
		return next
	}
	return func(ctx context.Context, obj runtime.Object) error {
		if next != nil {
			if err := next(ctx, obj); err != nil {
				return err
			}
		}
		return r.claims.Check(ctx, r.Store.DefaultQualifiedResource, obj, nil)
	}
}

// claimsUpdate runs next, then the claims check of the names an update adds.
func (r *REST) claimsUpdate(next rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	if r.claims == nil {
		return next
	}
	return func(ctx context.Context, obj, old runtime.Object) error {
		if next != nil {
			if err := next(ctx, obj, old); err != nil {
				return err
			}
		}
		return r.claims.Check(ctx, r.Store.DefaultQualifiedResource, obj, old)
	}
}

// Check refuses obj, of resource, with a 422 when another object of its namespace, of any
// kind, derives one of the names obj derives. old is the stored object on update, nil on
// create: only the names obj derives and old did not are checked, so that an edit that
// changes no derived name is never refused.
func (c *Claims) Check(ctx context.Context, resource schema.GroupResource, obj, old runtime.Object) error {
	o, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	mine, err := c.Derive(obj)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("deriving the host names of %s %q: %w", resource, o.GetName(), err))
	}
	if old != nil {
		before, err := c.Derive(old)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("deriving the host names of %s %q: %w", resource, o.GetName(), err))
		}
		had := map[string]bool{}
		for _, n := range before {
			had[n.Name] = true
		}
		var added []DerivedName
		for _, n := range mine {
			if !had[n.Name] {
				added = append(added, n)
			}
		}
		mine = added
	}
	if len(mine) == 0 {
		return nil
	}
	wanted := map[string]DerivedName{}
	for _, n := range mine {
		wanted[n.Name] = n
	}

	if c.Indexed() {
		return c.checkIndexed(resource, o, wanted)
	}
	var errs field.ErrorList
	own := resource.Resource
	ctx = genericapirequest.WithNamespace(ctx, o.GetNamespace())
	seen := map[string]derivedAt{}
	for _, k := range c.Kinds {
		list, err := k.List.List(ctx, &metainternalversion.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing the %s of namespace %q to check derived names: %w", k.Resource, o.GetNamespace(), err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		for _, item := range items {
			other, err := meta.Accessor(item)
			if err != nil {
				return apierrors.NewInternalError(err)
			}
			if k.Resource.Resource == own && other.GetName() == o.GetName() {
				continue
			}
			key := k.Kind + "/" + other.GetName()
			theirs, err := c.derivedOf(o.GetNamespace(), key, item, other)
			if err != nil {
				return apierrors.NewInternalError(fmt.Errorf("deriving the host names of %s %q: %w", k.Kind, other.GetName(), err))
			}
			seen[key] = derivedAt{uid: other.GetUID(), resourceVersion: other.GetResourceVersion(), names: theirs}
			var clash []DerivedName
			for _, n := range theirs {
				if mine, ok := wanted[n.Name]; ok {
					clash = append(clash, mine)
				}
			}
			if len(clash) > 0 {
				errs = append(errs, clashError(o.GetName(), k.Kind, other.GetName(), clash))
			}
		}
	}
	// What the namespace holds now is what is kept: a deleted object's names go.
	c.mu.Lock()
	if c.derived == nil {
		c.derived = map[string]map[string]derivedAt{}
	}
	c.derived[o.GetNamespace()] = seen
	c.mu.Unlock()
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(operator.Kind(c.kindOf(resource)), o.GetName(), errs)
}

// checkIndexed is Check from the index: the objects of the namespace that derive one of
// wanted, the names of o, of resource, that an update adds or a create derives.
func (c *Claims) checkIndexed(resource schema.GroupResource, o metav1.Object, wanted map[string]DerivedName) error {
	own := c.kindOf(resource)
	keys, clashes := c.index.owners(o.GetNamespace(), wanted)
	var errs field.ErrorList
	for _, key := range keys {
		kind, name, _ := strings.Cut(key, "/")
		if kind == own && name == o.GetName() {
			continue
		}
		errs = append(errs, clashError(o.GetName(), kind, name, clashes[key]))
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(operator.Kind(own), o.GetName(), errs)
}

// derivedOf are the names a stored object derives, kept from an earlier check while its UID
// and resourceVersion are the same.
func (c *Claims) derivedOf(namespace, key string, obj runtime.Object, m metav1.Object) ([]DerivedName, error) {
	c.mu.Lock()
	d, ok := c.derived[namespace][key]
	c.mu.Unlock()
	if ok && d.uid == m.GetUID() && d.resourceVersion == m.GetResourceVersion() && d.resourceVersion != "" {
		return d.names, nil
	}
	return c.Derive(obj)
}

// clashError says that the object named name derives the names clash, which kind/other
// derives too, at the field that chose the first of them.
func clashError(name, kind, other string, clash []DerivedName) *field.Error {
	first := clash[0]
	path, value := field.NewPath("metadata", "name"), name
	if first.Field != "" {
		parts := strings.Split(first.Field, ".")
		path, value = field.NewPath(parts[0], parts[1:]...), first.Name
	}
	what := fmt.Sprintf("the host object name %q", first.Name)
	if len(clash) > 1 {
		what = fmt.Sprintf("the host object names %q and %d more", first.Name, len(clash)-1)
	}
	return field.Invalid(path, value, fmt.Sprintf("derives %s, which %s/%s in this namespace derives too: two objects that write "+
		"one host object would overwrite each other's; choose another name", what, kind, other))
}

// kindOf is the kind of resource, for the 422's details.
func (c *Claims) kindOf(resource schema.GroupResource) string {
	for _, k := range c.Kinds {
		if k.Resource == resource {
			return k.Kind
		}
	}
	return resource.Resource
}
