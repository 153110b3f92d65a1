package link

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// link is the Link eu-1 of RootShard root in namespace team-a.
func link() *operator.Link {
	return &operator.Link{
		ObjectMeta: metav1.ObjectMeta{Name: "eu-1", Namespace: "team-a"},
		Spec: operator.LinkSpec{
			RootShardRef: corev1.LocalObjectReference{Name: "root"},
			Identity:     "eu-1.links.example.com",
			Consumers:    []operator.LinkConsumerKind{operator.LinkConsumerShard},
		},
	}
}

// sar is a fake delegated authorizer: it records every SubjectAccessReview it is asked and
// allows exactly the listed ones, as "user verb resource.group namespace/name".
type sar struct {
	allow map[string]bool
	err   error
	asked []string
}

func (s *sar) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	key := a.GetUser().GetName() + " " + a.GetVerb() + " " + a.GetResource() + "." + a.GetAPIGroup() + " " + a.GetNamespace() + "/" + a.GetName()
	if !a.IsResourceRequest() {
		key += " (not a resource request)"
	}
	s.asked = append(s.asked, key)
	if s.err != nil {
		return authorizer.DecisionNoOpinion, "", s.err
	}
	if s.allow[key] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "no RBAC rule", nil
}

const linkRoot = "alice link rootshards.operator.kcp.io team-a/root"

// TestLinkNeedsTheLinkRight holds the Kind's wiring to the SubjectAccessReview a request asks
// and the 403 a client gets: a create, and an update that changes the spec, ask for link on
// the named RootShard; an update of the metadata alone, or of nothing, asks nothing.
func TestLinkNeedsTheLinkRight(t *testing.T) {
	relabelled := link()
	relabelled.Labels = map[string]string{"region": "eu"}
	fewer := link()
	fewer.Spec.DNSNames = []string{"eu.kcp.example.com"}
	tests := []struct {
		name      string
		obj, old  *operator.Link
		allow     []string
		err       error
		asked     []string
		forbidden []string
	}{
		{name: "create, allowed", obj: link(), allow: []string{linkRoot}, asked: []string{linkRoot}},
		{
			name: "create, denied", obj: link(), asked: []string{linkRoot},
			forbidden: []string{
				`links.operator.kcp.io "eu-1" is forbidden: user "alice" may not set spec.rootShardRef to RootShard/root`,
				`without link on rootshards.operator.kcp.io "root" in namespace "team-a" (no RBAC rule)`,
				"kcp-setups-link grants it, kcp-setups-edit does not",
			},
		},
		{
			name: "use on the RootShard is not link", obj: link(), allow: []string{"alice use rootshards.operator.kcp.io team-a/root"},
			asked: []string{linkRoot}, forbidden: []string{`without link on rootshards.operator.kcp.io "root"`},
		},
		{
			name: "link on another RootShard is not link on this one", obj: link(), allow: []string{"alice link rootshards.operator.kcp.io team-a/other"},
			asked: []string{linkRoot}, forbidden: []string{`without link on rootshards.operator.kcp.io "root"`},
		},
		{
			name: "the authorizer fails", obj: link(), err: errors.New("webhook down"), asked: []string{linkRoot},
			forbidden: []string{`without link on rootshards.operator.kcp.io "root" in namespace "team-a" (could not be checked: webhook down)`},
		},
		{name: "update of nothing", obj: link(), old: link()},
		{name: "update of the labels", obj: relabelled, old: link()},
		{name: "update of the spec, allowed", obj: fewer, old: link(), allow: []string{linkRoot}, asked: []string{linkRoot}},
		{
			name: "update of the spec, denied", obj: fewer, old: link(), asked: []string{linkRoot},
			forbidden: []string{`without link on rootshards.operator.kcp.io "root"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &sar{allow: map[string]bool{}, err: tc.err}
			for _, a := range tc.allow {
				s.allow[a] = true
			}
			ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "alice"})
			var err error
			if tc.old == nil {
				err = store.CheckRequest(ctx, &Kind, authorizer.AuthorizerFunc(s.Authorize), tc.obj, nil)
			} else {
				err = store.CheckRequest(ctx, &Kind, authorizer.AuthorizerFunc(s.Authorize), tc.obj, tc.old)
			}
			assert.Equal(t, tc.asked, s.asked)
			if len(tc.forbidden) == 0 {
				require.NoError(t, err)
				return
			}
			var status apierrors.APIStatus
			require.ErrorAs(t, err, &status)
			assert.EqualValues(t, http.StatusForbidden, status.Status().Code)
			for _, want := range tc.forbidden {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

// TestACacheServerNeedsUse: a Link that lets the remote use a CacheServer's cache client asks
// use on the CacheServer besides link on the RootShard, and names the field without it.
func TestACacheServerNeedsUse(t *testing.T) {
	l := link()
	l.Spec.CacheServerRef = &corev1.LocalObjectReference{Name: "cache"}
	s := &sar{allow: map[string]bool{linkRoot: true}}
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "alice"})
	err := store.CheckRequest(ctx, &Kind, authorizer.AuthorizerFunc(s.Authorize), l, nil)
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err))
	assert.Contains(t, err.Error(), `spec.cacheServerRef to CacheServer/cache without use on cacheservers.operator.kcp.io "cache" in namespace "team-a"`)
	assert.Equal(t, []string{linkRoot, "alice use cacheservers.operator.kcp.io team-a/cache"}, s.asked)

	s = &sar{allow: map[string]bool{linkRoot: true, "alice use cacheservers.operator.kcp.io team-a/cache": true}}
	require.NoError(t, store.CheckRequest(ctx, &Kind, authorizer.AuthorizerFunc(s.Authorize), l, nil))
}
