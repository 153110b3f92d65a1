package store

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// BindToURL readies the metadata of a create subresource's body (a KubeconfigRequest, a
// CARotation), as pods/eviction and serviceaccounts/token do: a name or namespace it gives
// must be the URL's, a 400 otherwise; then it takes the URL's, and any managed fields the
// client sent are dropped, since the body is never stored.
func BindToURL(ctx context.Context, name string, meta *metav1.ObjectMeta) error {
	namespace, _ := genericapirequest.NamespaceFrom(ctx)
	if meta.Name != "" && meta.Name != name {
		return apierrors.NewBadRequest(fmt.Sprintf("metadata.name: Invalid value: %q: must be %q, the name in the URL", meta.Name, name))
	}
	if meta.Namespace != "" && meta.Namespace != namespace {
		return apierrors.NewBadRequest(fmt.Sprintf("metadata.namespace: Invalid value: %q: must be %q, the namespace in the URL", meta.Namespace, namespace))
	}
	meta.Name, meta.Namespace = name, namespace
	meta.ManagedFields = nil
	return nil
}
