// Package link serves the links resource and its status subresource: the declarations of a
// RootShard's remote consumers. Creating or changing one needs the right link on its
// RootShard (admit.go), and an identity belongs to one Link of a RootShard (identity.go).
package link

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// Kind describes Links to the shared registry code.
var Kind = store.Kind[*operator.Link, operator.LinkSpec, operator.LinkStatus]{
	Resource:   operator.Resource("links"),
	Singular:   operator.Resource("link"),
	New:        func() *operator.Link { return &operator.Link{} },
	NewList:    func() runtime.Object { return &operator.LinkList{} },
	Spec:       func(o *operator.Link) *operator.LinkSpec { return &o.Spec },
	Status:     func(o *operator.Link) *operator.LinkStatus { return &o.Status },
	Conditions: func(o *operator.Link) *[]metav1.Condition { return &o.Status.Conditions },

	Admit: admit,
	// A remote that may use a CacheServer gets its cache client's identity, as a RootShard's
	// spec.cache does: the author must be allowed to use the CacheServer.
	Permissions: func(o *operator.Link) []store.Permission {
		return store.ReferencePermissions(o.Spec.CacheServerRef, field.NewPath("spec", "cacheServerRef"), "cacheservers")
	},

	Validate:             validation.ValidateLink,
	ValidateUpdate:       validation.ValidateLinkUpdate,
	ValidateStatusUpdate: validation.ValidateLinkStatusUpdate,
	// What the remote reports over the link is the server's to write: a rotation waits for it.
	ServerWritten: []store.ServerWritten[*operator.Link]{{
		Path:  field.NewPath("status", "consumers"),
		Value: func(o *operator.Link) any { return o.Status.Consumers },
		Why:   "what a remote reports over its link",
	}},

	Table: store.Table[*operator.Link]{
		Columns: []store.Column[*operator.Link]{
			store.StringColumn("RootShard", "The RootShard the remote joins.",
				func(o *operator.Link) string { return o.Spec.RootShardRef.Name }),
			store.StringColumn("Identity", "The DNS name the remote's client certificate carries.",
				func(o *operator.Link) string { return o.Spec.Identity }),
			store.StringColumn("Consumers", "The kinds the remote may realize for the RootShard.", consumers),
			store.StringColumn("Ready", "Whether the remote may connect.",
				func(o *operator.Link) string {
					return store.ConditionStatus(o.Status.Conditions, operatorv1alpha1.ConditionLinkReady)
				}),
		},
	},
}

// consumers prints the consumer kinds as a list, in the order declared.
func consumers(o *operator.Link) string {
	names := make([]string, len(o.Spec.Consumers))
	for i, c := range o.Spec.Consumers {
		names[i] = string(c)
	}
	return strings.Join(names, ",")
}

// NewREST returns the links endpoint and its status subresource. authz answers the right
// link on the RootShard, and use on a CacheServer a Link names.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, authz authorizer.Authorizer) (*store.REST, *store.StatusREST, error) {
	return store.NewREST(scheme, optsGetter, &Kind, authz)
}
