// Package cacheserver serves the cacheservers resource and its status subresource.
package cacheserver

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// Kind describes CacheServers to the shared registry code.
var Kind = store.Kind[*operator.CacheServer, operator.CacheServerSpec, operator.CacheServerStatus]{
	Resource:   operator.Resource("cacheservers"),
	Singular:   operator.Resource("cacheserver"),
	New:        func() *operator.CacheServer { return &operator.CacheServer{} },
	NewList:    func() runtime.Object { return &operator.CacheServerList{} },
	Spec:       func(o *operator.CacheServer) *operator.CacheServerSpec { return &o.Spec },
	Status:     func(o *operator.CacheServer) *operator.CacheServerStatus { return &o.Status },
	Conditions: func(o *operator.CacheServer) *[]metav1.Condition { return &o.Status.Conditions },

	Permissions: func(o *operator.CacheServer) []store.Permission {
		spec := field.NewPath("spec")
		return append(store.ComponentPermissions(&o.Spec.ComponentSpec, spec),
			append(store.CertificatesPermissions(o.Spec.Certificates, spec.Child("certificates")),
				store.EtcdPermissions(o.Spec.Etcd, spec.Child("etcd"))...)...)
	},

	Normalize: func(o *operator.CacheServer) {
		o.Spec.Certificates = operator.WithoutEmptyCertificates(o.Spec.Certificates)
	},

	Replicas:  func(o *operator.CacheServer) *int32 { return o.Spec.Replicas },
	Rotations: func(o *operator.CacheServer) []operator.CARotationState { return o.Status.Rotations },

	Validate:             validation.ValidateCacheServer,
	ValidateUpdate:       validation.ValidateCacheServerUpdate,
	ValidateStatusUpdate: validation.ValidateCacheServerStatusUpdate,
	Warnings:             validation.CacheServerWarnings,

	Table: store.Table[*operator.CacheServer]{
		Columns: []store.Column[*operator.CacheServer]{
			store.PhaseColumn(func(o *operator.CacheServer) string { return string(o.Status.Phase) }),
		},
	},
}

// NewREST returns the cacheservers endpoint and its status subresource.
// authz answers whether the requester may set the fields the server acts on with its own
// rights.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, authz authorizer.Authorizer) (*store.REST, *store.StatusREST, error) {
	return store.NewREST(scheme, optsGetter, &Kind, authz)
}
