// Package kubeconfig serves the kubeconfigs resource and its status subresource.
package kubeconfig

import (
	"context"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"slices"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
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
	Resource:   operator.Resource("kubeconfigs"),
	Singular:   operator.Resource("kubeconfig"),
	New:        func() *operator.Kubeconfig { return &operator.Kubeconfig{} },
	NewList:    func() runtime.Object { return &operator.KubeconfigList{} },
	Spec:       func(o *operator.Kubeconfig) *operator.KubeconfigSpec { return &o.Spec },
	Status:     func(o *operator.Kubeconfig) *operator.KubeconfigStatus { return &o.Status },
	Conditions: func(o *operator.Kubeconfig) *[]metav1.Condition { return &o.Status.Conditions },

	Admit: admit,
	Permissions: func(o *operator.Kubeconfig) []store.Permission {
		target := field.NewPath("spec", "target")
		return slices.Concat(store.CertificateTemplatePermissions(o.Spec.CertificateTemplate, field.NewPath("spec", "certificateTemplate")),
			store.ReferencePermissions(o.Spec.Target.RootShardRef, target.Child("rootShardRef"), "rootshards"),
			store.ReferencePermissions(o.Spec.Target.ShardRef, target.Child("shardRef"), "shards"),
			store.ReferencePermissions(o.Spec.Target.FrontProxyRef, target.Child("frontProxyRef"), "frontproxies"),
			store.CopyPermissions(o.Spec.Target.RootShardSecretRef, target.Child("rootShardSecretRef")),
			store.LinkPermissions(o.Spec.Target.RootShardLink, target.Child("rootShardLink")),
			bindPermissions(o))
	},

	Validate:             validation.ValidateKubeconfig,
	ValidateUpdate:       validation.ValidateKubeconfigUpdate,
	ValidateStatusUpdate: validation.ValidateKubeconfigStatusUpdate,
	Warnings:             validation.KubeconfigValidation{}.Warnings,

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
	case t.RootShardLink != nil:
		return store.LinkColumn(t.RootShardLink)
	}
	return ""
}

// admit is a Kubeconfig's own checks of the requester's rights: the identity rule, then
// the skip-kcp-cleanup annotation (admitSkipCleanup).
func admit(ctx context.Context, authz authorizer.Authorizer, requester user.Info, kc, old *operator.Kubeconfig) error {
	if err := admitIdentity(ctx, authz, requester, kc, old); err != nil {
		return err
	}
	return admitSkipCleanup(ctx, authz, requester, kc, old)
}

// admitIdentity holds a Kubeconfig to the rule the kubeconfig subresource mints by, since it
// declares a credential as much as the subresource mints one: its username and groups are the
// creator's own, or ones it may impersonate. An update is checked again whenever the spec
// changes at all, not only its identity: whoever edits a Kubeconfig keeps a credential of
// that identity renewed, for as long as it says, into the Secret it says, toward the target
// it says, so an edit of the validity, the Secret, the template or the bindings is as much
// minting for that identity as creating it. An update of metadata alone (labels, finalizers)
// or of the status asks nothing.
func admitIdentity(ctx context.Context, authz authorizer.Authorizer, requester user.Info, kc, old *operator.Kubeconfig) error {
	if old != nil && apiequality.Semantic.DeepEqual(kc.Spec, old.Spec) {
		return nil
	}
	_, err := credentials.Resolve(ctx, authz, requester, kc.Spec.Username, kc.Spec.Groups, operator.Resource("kubeconfigs"), kc.Name)
	return err
}

// Options are the server's bounds on Kubeconfigs.
type Options struct {
	// MaxValidity bounds spec.validity (--max-kubeconfig-validity); zero is
	// validation.DefaultMaxKubeconfigValidity.
	MaxValidity time.Duration
}

// NewREST returns the kubeconfigs endpoint under the default bounds, which checks identities
// with authz, and its status subresource.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, authz authorizer.Authorizer) (*store.REST, *store.StatusREST, error) {
	return Options{}.NewREST(scheme, optsGetter, authz)
}

// NewREST returns the kubeconfigs endpoint under o's bounds: Kind, whose validation holds
// spec.validity to o.MaxValidity.
func (o Options) NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, authz authorizer.Authorizer) (*store.REST, *store.StatusREST, error) {
	kind := o.Kind()
	return store.NewREST(scheme, optsGetter, &kind, authz)
}

// Kind is Kind with o's bounds.
func (o Options) Kind() store.Kind[*operator.Kubeconfig, operator.KubeconfigSpec, operator.KubeconfigStatus] {
	kind := Kind
	v := validation.KubeconfigValidation{MaxValidity: o.MaxValidity}
	kind.Validate, kind.ValidateUpdate, kind.Warnings = v.Validate, v.ValidateUpdate, v.Warnings
	return kind
}
