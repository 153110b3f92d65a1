package store

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestEntityTooLarge(t *testing.T) {
	notFound := apierrors.NewNotFound(operator.Resource("rootshards"), "root")
	already := apierrors.NewRequestEntityTooLargeError("limit is 3145728")
	for _, tc := range []struct {
		name string
		err  error
		want int32 // 0: the error is returned unchanged
	}{
		{"no error", nil, 0},
		{"another API error", notFound, 0},
		{"already a 413", already, 0},
		{"another storage error", errors.New("etcdserver: request timed out"), 0},
		{"etcd's limit", errors.New("etcdserver: request is too large"), http.StatusRequestEntityTooLarge},
		{"the etcd client's limit", errors.New("rpc error: code = ResourceExhausted desc = trying to send message larger than max (2579354 vs. 2097152)"),
			http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := entityTooLarge(tc.err)
			if tc.want == 0 {
				assert.Equal(t, tc.err, got)
				return
			}
			status, ok := got.(apierrors.APIStatus)
			require.True(t, ok, "not an API status: %v", got)
			assert.Equal(t, tc.want, status.Status().Code)
			assert.Contains(t, got.Error(), tc.err.Error(), "the storage's reason is kept")
		})
	}
}

func TestWithoutManagedFields(t *testing.T) {
	obj := &operator.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	got, err := withoutManagedFields{rest.DefaultUpdatedObjectInfo(obj)}.UpdatedObject(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, got.(*operator.RootShard).ManagedFields)
	assert.Equal(t, "root", got.(*operator.RootShard).Name)
}
