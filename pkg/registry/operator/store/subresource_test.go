package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

func TestBindToURL(t *testing.T) {
	ctx := genericapirequest.WithNamespace(context.Background(), "team")
	for _, tc := range []struct {
		meta metav1.ObjectMeta
		says string
	}{
		{meta: metav1.ObjectMeta{Name: "other"}, says: `metadata.name: Invalid value: "other": must be "root"`},
		{meta: metav1.ObjectMeta{Namespace: "elsewhere"}, says: `metadata.namespace: Invalid value: "elsewhere": must be "team"`},
	} {
		err := BindToURL(ctx, "root", &tc.meta)
		require.True(t, apierrors.IsBadRequest(err), "%+v: %v", tc.meta, err)
		assert.Contains(t, err.Error(), tc.says)
	}
	for _, meta := range []metav1.ObjectMeta{{}, {Name: "root", Namespace: "team",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}} {
		require.NoError(t, BindToURL(ctx, "root", &meta))
		assert.Equal(t, metav1.ObjectMeta{Name: "root", Namespace: "team"}, meta, "the URL's name and namespace, and no managed fields")
	}
}
