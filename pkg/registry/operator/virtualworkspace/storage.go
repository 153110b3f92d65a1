// Package virtualworkspace serves the virtualworkspaces resource and its status subresource.
package virtualworkspace

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// Kind describes VirtualWorkspaces to the shared registry code.
var Kind = store.Kind[*operator.VirtualWorkspace, operator.VirtualWorkspaceSpec, operator.VirtualWorkspaceStatus]{
	Resource:   operator.Resource("virtualworkspaces"),
	Singular:   operator.Resource("virtualworkspace"),
	New:        func() *operator.VirtualWorkspace { return &operator.VirtualWorkspace{} },
	NewList:    func() runtime.Object { return &operator.VirtualWorkspaceList{} },
	Spec:       func(o *operator.VirtualWorkspace) *operator.VirtualWorkspaceSpec { return &o.Spec },
	Status:     func(o *operator.VirtualWorkspace) *operator.VirtualWorkspaceStatus { return &o.Status },
	Conditions: func(o *operator.VirtualWorkspace) *[]metav1.Condition { return &o.Status.Conditions },

	Permissions: permissions,

	Replicas: func(o *operator.VirtualWorkspace) *int32 { return o.Spec.Replicas },

	Validate:             validation.ValidateVirtualWorkspace,
	ValidateUpdate:       validation.ValidateVirtualWorkspaceUpdate,
	ValidateStatusUpdate: validation.ValidateVirtualWorkspaceStatusUpdate,
	Warnings:             validation.VirtualWorkspaceWarnings,

	Table: store.Table[*operator.VirtualWorkspace]{
		Columns: []store.Column[*operator.VirtualWorkspace]{
			store.StringColumn("Target", "The RootShard or Shard the server serves virtual workspaces for, as Kind/name.", target),
			store.StringColumn("URL", "The URL the server is reached at, which its shard announces for virtual workspaces.", url),
			store.PhaseColumn(func(o *operator.VirtualWorkspace) string { return string(o.Status.Phase) }),
		},
	},
}

// permissions are what a VirtualWorkspace's fields have the server do with its own rights.
// Beyond every component's, its pod runs commands and init containers of the author's choice
// with the setup's identities mounted, and mounts the kubeconfigs and volumes they name.
func permissions(o *operator.VirtualWorkspace) []store.Permission {
	spec := field.NewPath("spec")
	perms := slices.Concat(
		store.ComponentPermissions(&o.Spec.ComponentSpec, spec),
		store.CommandPermissions(o.Spec.Command, spec.Child("command")),
		store.CABundlePermissions(o.Spec.CABundleSecretRef, o.Spec.ClientCABundleRef, spec),
		store.SecretPermissions(o.Spec.KubeconfigSecretRef, spec.Child("kubeconfigSecretRef")),
		store.ReferencePermissions(o.Spec.Target.RootShardRef, spec.Child("target", "rootShardRef"), "rootshards"),
		store.ReferencePermissions(o.Spec.Target.ShardRef, spec.Child("target", "shardRef"), "shards"),
	)
	for i := range o.Spec.InitContainers {
		ic := &o.Spec.InitContainers[i]
		idx := spec.Child("initContainers").Index(i)
		perms = slices.Concat(perms,
			store.ImagePermissions(ic.Image, idx.Child("image")),
			store.CommandPermissions(ic.Command, idx.Child("command")),
			store.ArgsPermissions(ic.Args, idx.Child("args")),
			store.SecretPermissions(ic.KubeconfigSecretRef, idx.Child("kubeconfigSecretRef")),
			store.VolumesPermissions(ic.Volumes, idx.Child("volumes")),
		)
	}
	return perms
}

// target prints the target of a VirtualWorkspace as Kind/name, as the Kubeconfig's Target
// column does.
func target(o *operator.VirtualWorkspace) string {
	switch t := o.Spec.Target; {
	case t.RootShardRef != nil:
		return "RootShard/" + t.RootShardRef.Name
	case t.ShardRef != nil:
		return "Shard/" + t.ShardRef.Name
	}
	return ""
}

// url prints the URL the server is reached at, computed as the builders compute it.
func url(o *operator.VirtualWorkspace) string {
	return operator.VirtualWorkspaceURL(o.Name, o.Namespace, o.Spec.ClusterDomain, o.Spec.External.Hostname, o.Spec.External.Port)
}

// NewREST returns the virtualworkspaces endpoint and its status subresource.
// authz answers whether the requester may set the fields the server acts on with its own
// rights.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, authz authorizer.Authorizer) (*store.REST, *store.StatusREST, error) {
	return store.NewREST(scheme, optsGetter, &Kind, authz)
}
