// Package kubeconfig serves the kubeconfigs resource and its status subresource.
package kubeconfig

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
	"github.com/kcp-setups/apiserver/pkg/credentials"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// Kind describes Kubeconfigs to the shared registry code.
var Kind = store.Kind[*operator.Kubeconfig, operator.KubeconfigSpec, operator.KubeconfigStatus]{
	Resource: operator.Resource("kubeconfigs"),
	Singular: operator.Resource("kubeconfig"),
	New:      func() *operator.Kubeconfig { return &operator.Kubeconfig{} },
	NewList:  func() runtime.Object { return &operator.KubeconfigList{} },
	Spec:     func(o *operator.Kubeconfig) *operator.KubeconfigSpec { return &o.Spec },
	Status:   func(o *operator.Kubeconfig) *operator.KubeconfigStatus { return &o.Status },

	Admit: admitIdentity,
	Permissions: func(o *operator.Kubeconfig) []store.Permission {
		return append(store.CertificateTemplatePermissions(o.Spec.CertificateTemplate, field.NewPath("spec", "certificateTemplate")),
			bindPermissions(o)...)
	},

	Validate:             validation.ValidateKubeconfig,
	ValidateUpdate:       validation.ValidateKubeconfigUpdate,
	ValidateStatusUpdate: validation.ValidateKubeconfigStatusUpdate,
	Warnings:             validation.KubeconfigWarnings,

	Table: store.Table[*operator.Kubeconfig]{
		Columns: []store.Column[*operator.Kubeconfig]{
			store.StringColumn("Target", "The object the kubeconfig points at, as Kind/name.", target),
			store.StringColumn("Secret", "The Secret the kubeconfig is written to.",
				func(o *operator.Kubeconfig) string { return o.Spec.SecretRef.Name }),
			store.PhaseColumn(func(o *operator.Kubeconfig) string { return string(o.Status.Phase) }),
		},
	},
}

// target prints the target of a Kubeconfig as Kind/name.
func target(o *operator.Kubeconfig) string {
	t := o.Spec.Target
	switch {
	case t.RootShardRef != nil:
		return "RootShard/" + t.RootShardRef.Name
	case t.ShardRef != nil:
		return "Shard/" + t.ShardRef.Name
	case t.FrontProxyRef != nil:
		return "FrontProxy/" + t.FrontProxyRef.Name
	case t.RootShardSecretRef != nil:
		return "Secret/" + t.RootShardSecretRef.Name
	}
	return ""
}

// admitIdentity holds a Kubeconfig to the rule the kubeconfig subresource mints by, since it
// declares a credential as much as the subresource mints one: its username and groups are the
// creator's own, or ones it may impersonate. An update is checked only when they change.
func admitIdentity(ctx context.Context, authz authorizer.Authorizer, requester user.Info, kc, old *operator.Kubeconfig) error {
	if old != nil && kc.Spec.Username == old.Spec.Username && slices.Equal(kc.Spec.Groups, old.Spec.Groups) {
		return nil
	}
	_, err := credentials.Resolve(ctx, authz, requester, kc.Spec.Username, kc.Spec.Groups, operator.Resource("kubeconfigs"), kc.Name)
	return err
}

// NewREST returns the kubeconfigs endpoint, which checks identities with authz, and its
// status subresource.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, authz authorizer.Authorizer) (*store.REST, *store.StatusREST, error) {
	return store.NewREST(scheme, optsGetter, &Kind, authz)
}
