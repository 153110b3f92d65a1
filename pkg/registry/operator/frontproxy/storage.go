// Package frontproxy serves the frontproxies resource and its status subresource.
package frontproxy

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

// Kind describes FrontProxies to the shared registry code.
var Kind = store.Kind[*operator.FrontProxy, operator.FrontProxySpec, operator.FrontProxyStatus]{
	Resource:   operator.Resource("frontproxies"),
	Singular:   operator.Resource("frontproxy"),
	New:        func() *operator.FrontProxy { return &operator.FrontProxy{} },
	NewList:    func() runtime.Object { return &operator.FrontProxyList{} },
	Spec:       func(o *operator.FrontProxy) *operator.FrontProxySpec { return &o.Spec },
	Status:     func(o *operator.FrontProxy) *operator.FrontProxyStatus { return &o.Status },
	Conditions: func(o *operator.FrontProxy) *[]metav1.Condition { return &o.Status.Conditions },

	Permissions: permissions,

	Replicas: func(o *operator.FrontProxy) *int32 { return o.Spec.Replicas },

	Validate:             validation.ValidateFrontProxy,
	ValidateUpdate:       validation.ValidateFrontProxyUpdate,
	ValidateStatusUpdate: validation.ValidateFrontProxyStatusUpdate,
	Warnings:             validation.FrontProxyWarnings,

	SelectableFields: func(o *operator.FrontProxy) fields.Set {
		return fields.Set{operatorv1alpha1.RootShardRefField: store.RootShardName(o.Spec.RootShard)}
	},

	Table: store.Table[*operator.FrontProxy]{
		Columns: []store.Column[*operator.FrontProxy]{
			store.StringColumn("RootShard", "The RootShard this front proxy serves, or the copy of its join Secret.",
				func(o *operator.FrontProxy) string { return store.RootShardColumn(o.Spec.RootShard) }),
			store.StringColumn("Hostname", "The front proxy's own external hostname, if it has one.",
				externalHostname),
			store.PhaseColumn(func(o *operator.FrontProxy) string { return string(o.Status.Phase) }),
		},
	},
}

// permissions are what a FrontProxy's fields have the server do with its own rights. Beyond
// every component's, the proxy is a front door to the RootShard it references, so it needs
// use on it (or get on the copy of its join Secret), asked again on every change of spec.auth:
// auth decides whom that front door lets in. An identity source of its own (OIDC, a token
// webhook, a token file) says who a user is to every shard, so it needs trust on the
// RootShard, asked again on every change of that source. A path mapped to a VirtualWorkspace
// needs use on it.
func permissions(o *operator.FrontProxy) []store.Permission {
	spec := field.NewPath("spec")
	perms := slices.Concat(store.ComponentPermissions(&o.Spec.ComponentSpec, spec),
		store.AuthPermissions(o.Spec.Auth, spec.Child("auth")),
		store.CABundlePermissions(o.Spec.CABundleSecretRef, o.Spec.ClientCABundleRef, spec),
		store.RootShardConfigPermissions(&o.Spec.RootShard, spec.Child("rootShard")),
		store.TrustPermissions(&o.Spec.RootShard, store.IdentitySources(o.Spec.Auth, spec.Child("auth"))))
	// A path mapped to a VirtualWorkspace has the proxy send its callers to it with its
	// request-header identity: use on that VirtualWorkspace.
	for i, m := range o.Spec.AdditionalPathMappings {
		perms = append(perms, store.ReferencePermissions(m.VirtualWorkspaceRef,
			spec.Child("additionalPathMappings").Index(i).Child("virtualWorkspaceRef"), "virtualworkspaces")...)
	}
	if o.Spec.Auth != nil {
		for _, p := range store.RootShardConfigPermissions(&o.Spec.RootShard, spec.Child("rootShard")) {
			p.Field = spec.Child("auth").String()
			perms = append(perms, store.ChangeOf(p, o.Spec.Auth))
		}
	}
	return perms
}

// NewREST returns the frontproxies endpoint and its status subresource.
// authz answers whether the requester may set the fields the server acts on with its own
// rights.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, authz authorizer.Authorizer) (*store.REST, *store.StatusREST, error) {
	return store.NewREST(scheme, optsGetter, &Kind, authz)
}

// externalHostname is the Hostname column: external.hostname, else the deprecated
// externalHostname, as the builders read it (frontproxy.FrontProxy.ExternalHostname, which
// works on the versioned type).
func externalHostname(o *operator.FrontProxy) string {
	if e := o.Spec.External; e != nil && e.Hostname != "" {
		return e.Hostname
	}
	host, _ := operatorv1alpha1.SplitExternalHostname(o.Spec.ExternalHostname)
	return host
}
