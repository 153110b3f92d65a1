// Package store holds what every kind of operator.kcp.io shares in the registry: the
// create, update and status strategies, the genericregistry.Store wiring, field selectors and
// the table convertor. Each kind's package supplies a Kind value: its accessors, its
// validation and its printer columns, and nothing is copied between kinds.
package store

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// Object is an internal API object with spec and status.
type Object interface {
	runtime.Object
	metav1.Object
}

// Kind describes one kind to the shared registry code. T is the internal object type, Spec
// and Status its spec and status types.
type Kind[T Object, Spec, Status any] struct {
	// Resource is the plural resource, such as rootshards; Singular is its singular name.
	Resource schema.GroupResource
	Singular schema.GroupResource
	// New and NewList return empty objects of the kind.
	New     func() T
	NewList func() runtime.Object
	// Spec and Status point into an object.
	Spec   func(T) *Spec
	Status func(T) *Status
	// Conditions point at the status's conditions, of which a status write keeps the ones
	// the controllers record for good (keptConditions).
	Conditions func(T) *[]metav1.Condition

	// Normalize, when set, rewrites a spec that a client sent into the form it is stored
	// in, before validation, on create and update: a shape that means the same as another
	// is stored as that other, such as the empty struct kcp-operator's Go SDK sends for a
	// field its user left unset.
	Normalize func(T)

	// Validate, ValidateUpdate and ValidateStatusUpdate are the kind's validation.
	Validate             func(T) field.ErrorList
	ValidateUpdate       func(newObj, oldObj T) field.ErrorList
	ValidateStatusUpdate func(newObj, oldObj T) field.ErrorList

	// Permissions, when set, are what the object's fields have the server do with its own
	// rights: a create, or an update that asks for one the stored object did not, is allowed
	// only to a requester the authorizer allows each of them.
	Permissions func(T) []Permission
	// Admit, when set, is a check of its own, after validation, of the requester's rights.
	Admit Admit[T]
	// Replicas, when set, points at the object's pod count, which the server's Limits bound.
	Replicas func(T) *int32
	// NestedReplicas, when set, are the pod counts of the object's further workloads, by the
	// path of their field below spec (a RootShard's proxy.replicas), bound as Replicas is.
	NestedReplicas func(T) map[string]*int32
	// Rotations, when set, are the object's status.rotations, whose steps only the rotation
	// subresource and the server's controllers take (statusCheck).
	Rotations func(T) []operator.CARotationState
	// ServerWritten, when set, are parts of the status only the server's own code writes
	// (what a Link's remote reported over the link, which a rotation waits for): a status
	// write by anyone else that changes one is a 403 at its path.
	ServerWritten []ServerWritten[T]

	// Warnings, when set, are the warnings a create or an update returns to the client with
	// the object it stored, such as for a deprecated field that is accepted and mapped to its
	// replacement.
	Warnings func(T) []string

	// SelectableFields are the kind's field selectors beyond metadata.name and
	// metadata.namespace.
	SelectableFields func(T) fields.Set

	// Table holds the printer columns.
	Table Table[T]
}

// DefaultMaxReplicas is the default of --max-replicas: far above any kcp setup, and far below
// what would have the host cluster create pods until its quota or etcd gives out.
const DefaultMaxReplicas int32 = 100

// Limits are the server's bounds on what a spec asks for.
type Limits struct {
	// MaxReplicas bounds spec.replicas; zero or less bounds nothing.
	MaxReplicas int32
	// Namespaces are the only namespaces objects are created in (--watch-namespaces); empty
	// is every namespace.
	Namespaces []string
}

// Categories are the categories every kind belongs to, so that `kubectl get kcp` lists them.
var Categories = []string{"kcp"}

var _ rest.CategoriesProvider = &REST{}

// ServerWritten is a part of a kind's status that only the server's own code writes.
type ServerWritten[T any] struct {
	Path  *field.Path
	Value func(T) any
	// Why says what the part is, for the 403 of anyone else's write: "only the server
	// writes <Why>".
	Why string
	// Subresource, when set, is the kind's create subresource whose own write of the status
	// (WithSubresourceWrite) may change the part too: its requester was allowed create on
	// <resource>/<Subresource>, and the server's code wrote the value.
	Subresource string
}
