// Package kubeconfig serves the kubeconfigs resource and its status subresource.
package kubeconfig

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

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

	Validate:             validation.ValidateKubeconfig,
	ValidateUpdate:       validation.ValidateKubeconfigUpdate,
	ValidateStatusUpdate: validation.ValidateKubeconfigStatusUpdate,

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
	}
	return ""
}

// REST is the kubeconfigs endpoint. A Kubeconfig declares a credential as much as the
// kubeconfig subresource mints one, so it is held to the same rule: its username and groups
// are the creator's own, or ones it may impersonate.
type REST struct {
	*store.REST
	Authorizer authorizer.Authorizer
}

// NewREST returns the kubeconfigs endpoint, which checks identities with authz, and its
// status subresource.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, authz authorizer.Authorizer) (*REST, *store.StatusREST, error) {
	main, status, err := store.NewREST(scheme, optsGetter, &Kind)
	if err != nil {
		return nil, nil, err
	}
	return &REST{REST: main, Authorizer: authz}, status, nil
}

// Create checks the identity of a new Kubeconfig after admission's validation.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	return r.REST.Create(ctx, obj, func(ctx context.Context, obj runtime.Object) error {
		if createValidation != nil {
			if err := createValidation(ctx, obj); err != nil {
				return err
			}
		}
		return r.checkIdentity(ctx, obj.(*operator.Kubeconfig))
	}, options)
}

// Update checks the identity of a Kubeconfig whose username or groups change.
func (r *REST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.REST.Update(ctx, name, objInfo, func(ctx context.Context, obj runtime.Object) error {
		if createValidation != nil {
			if err := createValidation(ctx, obj); err != nil {
				return err
			}
		}
		return r.checkIdentity(ctx, obj.(*operator.Kubeconfig))
	}, func(ctx context.Context, obj, old runtime.Object) error {
		if updateValidation != nil {
			if err := updateValidation(ctx, obj, old); err != nil {
				return err
			}
		}
		n, o := obj.(*operator.Kubeconfig), old.(*operator.Kubeconfig)
		if n.Spec.Username == o.Spec.Username && slices.Equal(n.Spec.Groups, o.Spec.Groups) {
			return nil
		}
		return r.checkIdentity(ctx, n)
	}, forceAllowCreate, options)
}

// checkIdentity allows the Kubeconfig's identity only to a requester that is it, or may
// impersonate it.
func (r *REST) checkIdentity(ctx context.Context, kc *operator.Kubeconfig) error {
	requester, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		// Every request that passed authentication, even an anonymous one, has a user; only a
		// server whose authentication is off has none, and allows everything, as the library
		// does. This server turns it off only in the integration tier.
		return nil
	}
	_, err := credentials.Resolve(ctx, r.Authorizer, requester, kc.Spec.Username, kc.Spec.Groups, Kind.Resource, kc.Name)
	return err
}
