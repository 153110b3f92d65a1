// Package shard serves the shards resource and its status subresource.
package shard

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"slices"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// Kind describes Shards to the shared registry code.
var Kind = store.Kind[*operator.Shard, operator.ShardSpec, operator.ShardStatus]{
	Resource:   operator.Resource("shards"),
	Singular:   operator.Resource("shard"),
	New:        func() *operator.Shard { return &operator.Shard{} },
	NewList:    func() runtime.Object { return &operator.ShardList{} },
	Spec:       func(o *operator.Shard) *operator.ShardSpec { return &o.Spec },
	Status:     func(o *operator.Shard) *operator.ShardStatus { return &o.Status },
	Conditions: func(o *operator.Shard) *[]metav1.Condition { return &o.Status.Conditions },

	Permissions: func(o *operator.Shard) []store.Permission {
		spec := field.NewPath("spec")
		return append(store.ComponentPermissions(&o.Spec.ComponentSpec, spec),
			slices.Concat(store.AuthPermissions(o.Spec.Auth, spec.Child("auth")),
				store.CABundlePermissions(o.Spec.CABundleSecretRef, o.Spec.ClientCABundleRef, spec),
				store.ShardConfigPermissions(&o.Spec.CommonShardSpec, spec),
				store.EtcdRestorePermissions(o.Spec.Etcd.Managed, operator.EtcdRestoreSource{Kind: "Shard", Name: o.Name},
					spec.Child("etcd", "managed", "restore")),
				store.RootShardConfigPermissions(&o.Spec.RootShard, spec.Child("rootShard")),
				store.CachePermissions(o.Spec.Cache, spec.Child("cache")),
				trustPermissions(o, spec))...)
	},

	Replicas: func(o *operator.Shard) *int32 { return o.Spec.Replicas },

	Validate:             validation.ValidateShard,
	ValidateUpdate:       validation.ValidateShardUpdate,
	ValidateStatusUpdate: validation.ValidateShardStatusUpdate,
	ServerWritten:        store.EtcdStatusWritten(func(o *operator.Shard) *operator.ManagedEtcdStatus { return o.Status.Etcd }),
	Warnings:             validation.ShardWarnings,

	SelectableFields: func(o *operator.Shard) fields.Set {
		return fields.Set{operatorv1alpha1.RootShardRefField: store.RootShardName(o.Spec.RootShard)}
	},

	Table: store.Table[*operator.Shard]{
		Columns: []store.Column[*operator.Shard]{
			store.StringColumn("RootShard", "The RootShard this shard joins, or the copy of its join Secret.",
				func(o *operator.Shard) string { return store.RootShardColumn(o.Spec.RootShard) }),
			store.PhaseColumn(func(o *operator.Shard) string { return string(o.Status.Phase) }),
		},
	},
}

// trustPermissions hold what a Shard has its RootShard's kcp trust to trust on the RootShard:
// an identity source of its own says who a user is on the shard, a storage without TLS is the
// shard's RBAC for anyone on the path, and a base URL of the author's choice is where the
// root shard and the front proxies send their users' requests.
func trustPermissions(o *operator.Shard, spec *field.Path) []store.Permission {
	return store.TrustPermissions(&o.Spec.RootShard,
		append(store.IdentitySources(o.Spec.Auth, spec.Child("auth")), store.ShardTrusted(&o.Spec.CommonShardSpec, spec)...))
}

// NewREST returns the shards endpoint and its status subresource.
// authz answers whether the requester may set the fields the server acts on with its own
// rights.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, authz authorizer.Authorizer) (*store.REST, *store.StatusREST, error) {
	return store.NewREST(scheme, optsGetter, &Kind, authz)
}
