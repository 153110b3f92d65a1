package link

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store/storetest"
)

func linkOf(ns, name, rootShard, identity string) operator.Link {
	l := link()
	l.Namespace, l.Name, l.Spec.RootShardRef, l.Spec.Identity = ns, name, corev1.LocalObjectReference{Name: rootShard}, identity
	return *l
}

// TestAnIdentityIsOneLinksOfARootShard: a new Link whose identity another Link of its
// RootShard declares is refused with a 422 at spec.identity that names the other; the same
// identity for another RootShard, or in another namespace, is another member.
func TestAnIdentityIsOneLinksOfARootShard(t *testing.T) {
	others := storetest.Lister{NewListFunc: func() runtime.Object { return &operator.LinkList{} }, Objects: []runtime.Object{
		new(linkOf("team-a", "eu-1", "root", "eu-1.links.example.com")),
		new(linkOf("team-a", "us-1", "other", "us-1.links.example.com")),
		new(linkOf("team-b", "us-2", "root", "us-2.links.example.com")),
	}}
	tests := []struct {
		name    string
		obj     operator.Link
		refused string
	}{
		{name: "a new identity", obj: linkOf("team-a", "eu-2", "root", "eu-2.links.example.com")},
		{
			name: "the identity of another Link of the RootShard", obj: linkOf("team-a", "eu-2", "root", "eu-1.links.example.com"),
			refused: `spec.identity: Invalid value: "eu-1.links.example.com": is the identity of Link/eu-1 of RootShard "root" in this namespace`,
		},
		{name: "the identity of a Link of another RootShard", obj: linkOf("team-a", "us-1b", "root", "us-1.links.example.com")},
		{name: "the identity of a Link in another namespace", obj: linkOf("team-a", "us-2", "root", "us-2.links.example.com")},
		{name: "the Link itself, stored (an apply that creates)", obj: linkOf("team-a", "eu-1", "root", "eu-1.links.example.com")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := store.NeighboursOf(context.Background(), map[string]rest.Lister{"links": others})
			err := IdentityUnique(context.Background(), n, &tc.obj, nil)
			if tc.refused == "" {
				require.NoError(t, err)
				return
			}
			var status apierrors.APIStatus
			require.ErrorAs(t, err, &status)
			assert.EqualValues(t, http.StatusUnprocessableEntity, status.Status().Code)
			assert.Contains(t, err.Error(), tc.refused)
		})
	}
	// An update is not checked: both fields are immutable, which validation holds.
	n := store.NeighboursOf(context.Background(), map[string]rest.Lister{"links": others})
	dup := linkOf("team-a", "eu-2", "root", "eu-1.links.example.com")
	require.NoError(t, IdentityUnique(context.Background(), n, &dup, &dup))
}
