package apiserver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// TestAnAddressChangeAsksForTheKubeconfigsItRewrites: changing a FrontProxy's external
// address or a Shard's shardBaseURL rewrites the Secrets of the Kubeconfigs that target it,
// so it is refused (403 naming the field and each Kubeconfig) to a requester who could not
// create those Kubeconfigs; one who could, or a change that keeps the address, passes.
func TestAnAddressChangeAsksForTheKubeconfigsItRewrites(t *testing.T) {
	fp := func(host string, replicas int32) *operator.FrontProxy {
		return &operator.FrontProxy{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "team-a"},
			Spec: operator.FrontProxySpec{ComponentSpec: operator.ComponentSpec{Replicas: &replicas},
				RootShard: operator.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}},
				External:  &operator.FrontProxyExternalConfig{Hostname: host}}}
	}
	kc := func(name, username string, target operator.KubeconfigTarget) *operator.Kubeconfig {
		return &operator.Kubeconfig{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"},
			Spec: operator.KubeconfigSpec{Username: username, Target: target, SecretRef: corev1.LocalObjectReference{Name: name}}}
	}
	toEdge := operator.KubeconfigTarget{FrontProxyRef: &corev1.LocalObjectReference{Name: "edge"}}
	toBeta := operator.KubeconfigTarget{ShardRef: &corev1.LocalObjectReference{Name: "beta"}}
	kubeconfigs := []runtime.Object{
		kc("alice", "alice", toEdge),
		kc("bob", "bob", operator.KubeconfigTarget{FrontProxyRef: &corev1.LocalObjectReference{Name: "other"}}),
		kc("carol", "carol", toBeta),
	}
	useAll := []string{"use frontproxies edge", "use shards beta"}
	tests := []struct {
		name      string
		obj, old  runtime.Object
		rights    []string
		forbidden []string
	}{
		{name: "a new FrontProxy", obj: fp("new.example.com", 2)},
		{name: "scaling keeps the address", obj: fp("kcp.example.com", 3), old: fp("kcp.example.com", 2)},
		{name: "a new hostname, without impersonating alice", obj: fp("evil.example.com", 2), old: fp("kcp.example.com", 2), rights: useAll,
			forbidden: []string{`frontproxies.operator.kcp.io "edge" is forbidden: user "eve" may not change spec.external`, `Kubeconfig "alice"`}},
		{name: "a new hostname, as one who could declare alice's Kubeconfig", obj: fp("new.example.com", 2), old: fp("kcp.example.com", 2),
			rights: append([]string{"impersonate users alice"}, useAll...)},
		{name: "a new hostname, without use on the FrontProxy", obj: fp("new.example.com", 2), old: fp("kcp.example.com", 2),
			rights: []string{"impersonate users alice"}, forbidden: []string{`Kubeconfig "alice"`, "spec.target.frontProxyRef"}},
		{name: "a new shardBaseURL, without impersonating carol",
			obj: shardIn("team-a", "beta", "https://beta.example.com"), old: shardIn("team-a", "beta", ""), rights: useAll,
			forbidden: []string{`shards.operator.kcp.io "beta" is forbidden: user "eve" may not change spec.shardBaseURL`, `Kubeconfig "carol"`}},
		{name: "the same shardBaseURL", obj: shardIn("team-a", "beta", "https://beta.example.com"), old: shardIn("team-a", "beta", "https://beta.example.com")},
	}
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "eve"})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			authz := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
				for _, r := range tc.rights {
					if r == a.GetVerb()+" "+a.GetResource()+" "+a.GetName() {
						return authorizer.DecisionAllow, "", nil
					}
				}
				return authorizer.DecisionNoOpinion, "", nil
			})
			var old runtime.Object
			if tc.old != nil {
				old = tc.old
			}
			err := kubeconfigsFollowTheirTarget(ctx, authz, neighboursOf(kubeconfigs...), tc.obj, old)
			if len(tc.forbidden) == 0 {
				require.NoError(t, err)
				return
			}
			require.True(t, apierrors.IsForbidden(err), "a 403: %v", err)
			for _, s := range tc.forbidden {
				assert.Contains(t, err.Error(), s)
			}
			assert.NotContains(t, err.Error(), `Kubeconfig "bob"`, "another FrontProxy's Kubeconfig is not rewritten")
		})
	}
}
