package link

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// IdentityUnique refuses, with a 422 at spec.identity, a Link whose identity another Link of
// the same RootShard declares: the listener tells remotes apart by that name alone, so two
// would speak for each other. A Link being deleted still holds its identity until it is
// gone. Both fields are immutable, so only a create is checked. Two creates at the same
// moment can both pass, as with the claims on derived names.
func IdentityUnique(_ context.Context, n store.Neighbours, obj, old runtime.Object) error {
	l, ok := obj.(*operator.Link)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("not a Link: %T", obj))
	}
	if old != nil {
		return nil
	}
	items, err := n.List("links", l.Namespace)
	if err != nil {
		return err
	}
	for _, item := range items {
		other, ok := item.(*operator.Link)
		if !ok || other.Name == l.Name || other.Spec.RootShardRef.Name != l.Spec.RootShardRef.Name || other.Spec.Identity != l.Spec.Identity {
			continue
		}
		return apierrors.NewInvalid(operator.Kind("Link"), l.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "identity"), l.Spec.Identity,
			fmt.Sprintf("is the identity of Link/%s of RootShard %q in this namespace: the RootShard tells its remotes apart by it; choose another",
				other.Name, l.Spec.RootShardRef.Name))})
	}
	return nil
}
