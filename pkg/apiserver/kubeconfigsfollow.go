package apiserver

import (
	"context"
	"fmt"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// A Kubeconfig's Secret points at its target's address: a FrontProxy's external hostname and
// port, a Shard's shardBaseURL. When the target's address changes, the controller rewrites
// every such Secret toward the new address, with the credentials the Kubeconfig holds. So a
// change of the address is allowed only to a requester who could create each Kubeconfig it
// rewrites (its identity, its bindings, its templates), as if they declared it anew; anyone
// else is refused with a 403 naming the field and the Kubeconfigs (docs/credentials.md).

// kubeconfigsFollowTheirTarget refuses a FrontProxy's or Shard's change of address to a
// requester who could not create every Kubeconfig of the namespace that targets it.
func kubeconfigsFollowTheirTarget(ctx context.Context, authz authorizer.Authorizer, n store.Neighbours, obj, old runtime.Object) error {
	if old == nil {
		return nil // a new object has no Kubeconfig written toward it yet
	}
	var (
		resource string
		name, ns string
		fld      *field.Path
		changed  bool
		targets  func(*operator.Kubeconfig) bool
	)
	switch o := obj.(type) {
	case *operator.FrontProxy:
		prev, _ := old.(*operator.FrontProxy)
		resource, name, ns = "frontproxies", o.Name, o.Namespace
		fld = field.NewPath("spec", "external")
		if o.Spec.ExternalHostname != "" || (prev != nil && prev.Spec.ExternalHostname != "") {
			if prev == nil || prev.Spec.ExternalHostname != o.Spec.ExternalHostname {
				fld = field.NewPath("spec", "externalHostname")
			}
		}
		changed = prev == nil || !apiequality.Semantic.DeepEqual(prev.Spec.External, o.Spec.External) ||
			prev.Spec.ExternalHostname != o.Spec.ExternalHostname
		targets = func(kc *operator.Kubeconfig) bool {
			return kc.Spec.Target.FrontProxyRef != nil && kc.Spec.Target.FrontProxyRef.Name == name
		}
	case *operator.Shard:
		prev, _ := old.(*operator.Shard)
		resource, name, ns = "shards", o.Name, o.Namespace
		fld = field.NewPath("spec", "shardBaseURL")
		changed = prev == nil || prev.Spec.ShardBaseURL != o.Spec.ShardBaseURL
		targets = func(kc *operator.Kubeconfig) bool {
			return kc.Spec.Target.ShardRef != nil && kc.Spec.Target.ShardRef.Name == name
		}
	default:
		return nil
	}
	if !changed {
		return nil
	}
	requester, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return nil // authentication is off (the integration tier): nothing to ask
	}
	items, err := n.List("kubeconfigs", ns)
	if err != nil {
		return err
	}
	var refused []string
	for _, item := range items {
		kc, ok := item.(*operator.Kubeconfig)
		if !ok || !targets(kc) || kc.DeletionTimestamp != nil {
			continue
		}
		if err := store.CheckRequest(ctx, &kubeconfig.Kind, authz, kc, nil); err != nil {
			refused = append(refused, fmt.Sprintf("Kubeconfig %q (%s)", kc.Name, reasonOf(err)))
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return apierrors.NewForbidden(operator.Resource(resource), name, fmt.Errorf(
		"user %q may not change %s: the server would rewrite the kubeconfig Secrets of %s toward the new address, "+
			"which the user could not create; have their authors or an admin change it, or delete those Kubeconfigs first",
		requester.GetName(), fld, strings.Join(refused, "; ")))
}

// reasonOf is what a refusal says.
func reasonOf(err error) string {
	if s, ok := err.(apierrors.APIStatus); ok {
		return s.Status().Message
	}
	return err.Error()
}
