package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// TestDeletingEtcdVolumesNeedsTheRightItUses: the delete-etcd-volumes annotation has the
// server delete the managed etcd's claims when the object goes, so setting it to "true",
// on create or on an update that adds or changes it, needs delete on persistentvolumeclaims
// in the namespace, and its 403 names the annotation and the right; one row per case.
func TestDeletingEtcdVolumesNeedsTheRightItUses(t *testing.T) {
	annotated := func(value *string) *operator.CacheServer {
		cs := cacheServer(1, "")
		if value != nil {
			cs.Annotations = map[string]string{"operator.kcp.io/delete-etcd-volumes": *value}
		}
		return cs
	}
	yes, no := "true", "false"
	const right = "delete persistentvolumeclaims. "
	for _, tc := range []struct {
		name      string
		old, obj  *operator.CacheServer
		allowed   bool
		forbidden bool
	}{
		{"eve creates it with the annotation", nil, annotated(&yes), false, true},
		{"the admin creates it with the annotation", nil, annotated(&yes), true, false},
		{"eve adds the annotation", annotated(nil), annotated(&yes), false, true},
		{"eve turns it from false to true", annotated(&no), annotated(&yes), false, true},
		{"the admin adds the annotation", annotated(nil), annotated(&yes), true, false},
		{"eve edits an object that the admin annotated", annotated(&yes), annotated(&yes), false, false},
		{"eve removes the annotation", annotated(&yes), annotated(nil), false, false},
		{"eve sets another value, which asks nothing", annotated(nil), annotated(&no), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &grants{allow: map[string]bool{right: tc.allowed}}
			a := newAdmitter(testKind(), authorizer.AuthorizerFunc(g.Authorize))
			ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "eve"})
			var err error
			if tc.old == nil {
				err = a.create(nil)(ctx, tc.obj)
			} else {
				err = a.update(nil)(ctx, tc.obj, tc.old)
			}
			if !tc.forbidden {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsForbidden(err), "a 403, got %v", err)
			assert.Contains(t, err.Error(), `metadata.annotations[operator.kcp.io/delete-etcd-volumes] to true without delete on persistentvolumeclaims in namespace "ns"`)
			assert.Equal(t, []string{right + " in ns for eve"}, g.asked)
		})
	}
}
