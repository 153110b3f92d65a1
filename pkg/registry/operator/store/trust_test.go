package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/shard"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// rbac answers as RBAC would for a requester granted exactly rights, each "verb resource name"
// (name empty for any), and records what it was asked.
type rbac struct {
	rights []string
	asked  []string
}

func (r *rbac) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	key := a.GetVerb() + " " + a.GetResource() + " " + a.GetName()
	r.asked = append(r.asked, key)
	for _, right := range r.rights {
		if right == key || right == a.GetVerb()+" "+a.GetResource()+" " {
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionNoOpinion, "no RBAC rule", nil
}

const (
	useRoot   = "use rootshards root"
	trustRoot = "trust rootshards root"
)

// The identity sources a FrontProxy or Shard may add, each with the Secret it mounts.
var (
	oidcSource    = &operator.AuthSpec{OIDC: &operator.OIDCConfiguration{IssuerURL: "https://idp.example.com", ClientID: "kcp"}}
	webhookSource = &operator.AuthSpec{Webhook: &operator.AuthWebhookSpec{ConfigSecretName: "authn-hook"}}
	tokenSource   = &operator.AuthSpec{TokenAuthFile: &operator.TokenAuthFileSpec{SecretName: "tokens"}}
)

func edge(mutate func(*operator.FrontProxySpec)) *operator.FrontProxy {
	fp := &operator.FrontProxy{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "team-a"},
		Spec: operator.FrontProxySpec{RootShard: operator.RootShardConfig{Reference: localRef("root")}}}
	if mutate != nil {
		mutate(&fp.Spec)
	}
	return fp
}

func beta(mutate func(*operator.ShardSpec)) *operator.Shard {
	s := &operator.Shard{ObjectMeta: metav1.ObjectMeta{Name: "beta", Namespace: "team-a"},
		Spec: operator.ShardSpec{RootShard: operator.RootShardConfig{Reference: localRef("root")},
			CommonShardSpec: operator.CommonShardSpec{Etcd: operator.EtcdConfig{Endpoints: []string{"https://etcd.team-a.svc:2379"}}}}}
	if mutate != nil {
		mutate(&s.Spec)
	}
	return s
}

// TestIdentitySourcesNeedTrust: one row per case of issue 38 (6) and per right. use on the
// RootShard (what kcp-setups-edit grants, or a Role by name) lets a FrontProxy or Shard join
// it; an identity source of its own, an etcd without TLS or a shardBaseURL needs trust on the
// RootShard too, refused with a 403 naming the field and the missing right; a setup joined by
// a copy of the join Secret is held to get on the copy instead.
func TestIdentitySourcesNeedTrust(t *testing.T) {
	const trustMissing = `without trust on rootshards.operator.kcp.io "root"`
	tests := []struct {
		name      string
		obj, old  runtime.Object
		rights    []string
		forbidden []string
	}{
		{name: "FrontProxy, OIDC, use only", obj: edge(func(s *operator.FrontProxySpec) { s.Auth = oidcSource }),
			rights: []string{useRoot}, forbidden: []string{"spec.auth.oidc to the OIDC issuer https://idp.example.com " + trustMissing}},
		{name: "FrontProxy, OIDC, use and trust", obj: edge(func(s *operator.FrontProxySpec) { s.Auth = oidcSource }),
			rights: []string{useRoot, trustRoot}},
		{name: "FrontProxy, OIDC, trust without use", obj: edge(func(s *operator.FrontProxySpec) { s.Auth = oidcSource }),
			rights: []string{trustRoot}, forbidden: []string{`spec.rootShard.ref to RootShard/root without use`}},
		{name: "FrontProxy, token webhook, use and get", obj: edge(func(s *operator.FrontProxySpec) { s.Auth = webhookSource }),
			rights: []string{useRoot, "get secrets authn-hook"}, forbidden: []string{"spec.auth.webhook to the token webhook of Secret/authn-hook " + trustMissing}},
		{name: "FrontProxy, token file, use and get", obj: edge(func(s *operator.FrontProxySpec) { s.Auth = tokenSource }),
			rights: []string{useRoot, "get secrets tokens"}, forbidden: []string{"spec.auth.tokenAuthFile to the token file of Secret/tokens " + trustMissing}},
		{name: "FrontProxy, token file, use, get and trust", obj: edge(func(s *operator.FrontProxySpec) { s.Auth = tokenSource }),
			rights: []string{useRoot, "get secrets tokens", trustRoot}},
		{name: "FrontProxy, more groups to drop: use is enough",
			obj:    edge(func(s *operator.FrontProxySpec) { s.Auth = &operator.AuthSpec{DropGroups: []string{"contractors"}} }),
			rights: []string{useRoot}},
		{name: "FrontProxy, service accounts: use is enough",
			obj: edge(func(s *operator.FrontProxySpec) {
				s.Auth = &operator.AuthSpec{ServiceAccount: &operator.ServiceAccountAuthentication{Enabled: true}}
			}),
			rights: []string{useRoot}},
		{name: "FrontProxy joined by a copy, OIDC: get on the copy", obj: edge(func(s *operator.FrontProxySpec) {
			s.RootShard = operator.RootShardConfig{SecretRef: localRef("root-front-proxy-join")}
			s.Auth = oidcSource
		}), rights: []string{"get secrets root-front-proxy-join"}},
		{name: "FrontProxy, the same issuer on update asks nothing",
			obj: edge(func(s *operator.FrontProxySpec) { s.Auth = oidcSource; s.Replicas = new(int32) }),
			old: edge(func(s *operator.FrontProxySpec) { s.Auth = oidcSource })},
		{name: "FrontProxy, another issuer on update asks trust again",
			obj: edge(func(s *operator.FrontProxySpec) {
				s.Auth = &operator.AuthSpec{OIDC: &operator.OIDCConfiguration{IssuerURL: "https://evil.example.com", ClientID: "kcp"}}
			}),
			old: edge(func(s *operator.FrontProxySpec) { s.Auth = oidcSource }), rights: []string{useRoot},
			forbidden: []string{"spec.auth.oidc to the OIDC issuer https://evil.example.com " + trustMissing}},
		{name: "FrontProxy, another groups claim on update asks trust again",
			obj: edge(func(s *operator.FrontProxySpec) {
				s.Auth = &operator.AuthSpec{OIDC: &operator.OIDCConfiguration{IssuerURL: "https://idp.example.com", ClientID: "kcp", GroupsClaim: "roles"}}
			}),
			old: edge(func(s *operator.FrontProxySpec) { s.Auth = oidcSource }), rights: []string{useRoot},
			forbidden: []string{"spec.auth.oidc " + "to the OIDC issuer https://idp.example.com " + trustMissing}},

		{name: "Shard, in-cluster and TLS: use is enough", obj: beta(nil), rights: []string{useRoot}},
		{name: "Shard, OIDC, use only", obj: beta(func(s *operator.ShardSpec) { s.Auth = oidcSource }),
			rights: []string{useRoot}, forbidden: []string{"spec.auth.oidc to the OIDC issuer https://idp.example.com " + trustMissing}},
		{name: "Shard, token file, use and get", obj: beta(func(s *operator.ShardSpec) { s.Auth = tokenSource }),
			rights: []string{useRoot, "get secrets tokens"}, forbidden: []string{"spec.auth.tokenAuthFile " + "to the token file of Secret/tokens " + trustMissing}},
		{name: "Shard, shardBaseURL, use only", obj: beta(func(s *operator.ShardSpec) { s.ShardBaseURL = "https://beta.example.com:6443" }),
			rights: []string{useRoot}, forbidden: []string{"spec.shardBaseURL to https://beta.example.com:6443 " + trustMissing}},
		{name: "Shard, shardBaseURL, use and trust", obj: beta(func(s *operator.ShardSpec) { s.ShardBaseURL = "https://beta.example.com:6443" }),
			rights: []string{useRoot, trustRoot}},
		{name: "Shard, etcd over plain HTTP, use only",
			obj: beta(func(s *operator.ShardSpec) {
				s.Etcd.Endpoints = []string{"https://etcd-0:2379", "http://etcd.attacker.example:2379"}
			}),
			rights: []string{useRoot}, forbidden: []string{"spec.etcd.endpoints[1] to an etcd without TLS at http://etcd.attacker.example:2379 " + trustMissing}},
		{name: "Shard, schemeless etcd without a client certificate, use only",
			obj:    beta(func(s *operator.ShardSpec) { s.Etcd.Endpoints = []string{"etcd.team-a.svc:2379"} }),
			rights: []string{useRoot}, forbidden: []string{"spec.etcd.endpoints[0] to an etcd without TLS at etcd.team-a.svc:2379 " + trustMissing}},
		{name: "Shard, schemeless etcd with a client certificate: TLS, use is enough", obj: beta(func(s *operator.ShardSpec) {
			s.Etcd.Endpoints = []string{"etcd.team-a.svc:2379"}
			s.Etcd.TLSConfig = &operator.EtcdTLSConfig{SecretRef: *localRef("etcd-client")}
		}), rights: []string{useRoot, "get secrets etcd-client"}},
		{name: "Shard, etcd over plain HTTP, use and trust",
			obj:    beta(func(s *operator.ShardSpec) { s.Etcd.Endpoints = []string{"http://etcd.attacker.example:2379"} }),
			rights: []string{useRoot, trustRoot}},
		{name: "Shard, the endpoints reordered on update ask nothing",
			obj: beta(func(s *operator.ShardSpec) { s.Etcd.Endpoints = []string{"http://b:2379", "http://a:2379"} }),
			old: beta(func(s *operator.ShardSpec) { s.Etcd.Endpoints = []string{"http://a:2379", "http://b:2379"} })},
		{name: "Shard, another shardBaseURL on update asks trust again",
			obj: beta(func(s *operator.ShardSpec) { s.ShardBaseURL = "https://elsewhere.example.com" }),
			old: beta(func(s *operator.ShardSpec) { s.ShardBaseURL = "https://beta.example.com" }), rights: []string{useRoot},
			forbidden: []string{"spec.shardBaseURL to https://elsewhere.example.com " + trustMissing}},
		{name: "Shard, allow every path without authorization, use only",
			obj:    beta(func(s *operator.ShardSpec) { s.Authorization = &operator.AuthorizationSpec{AllowPaths: []string{"/*"}} }),
			rights: []string{useRoot}, forbidden: []string{"spec.authorization to the paths allowed without authorization /* " + trustMissing}},
		{name: "Shard, the authorizers' order, use only",
			obj: beta(func(s *operator.ShardSpec) {
				s.Authorization = &operator.AuthorizationSpec{Order: []string{"AlwaysAllowPaths"}}
			}),
			rights: []string{useRoot}, forbidden: []string{"spec.authorization to the authorizers AlwaysAllowPaths " + trustMissing}},
		{name: "Shard, an authorization webhook, use and get",
			obj: beta(func(s *operator.ShardSpec) {
				s.Authorization = &operator.AuthorizationSpec{Webhook: &operator.AuthorizationWebhookSpec{ConfigSecretName: "authz"}}
			}),
			rights: []string{useRoot, "get secrets authz"}, forbidden: []string{"spec.authorization to the authorization webhook of Secret/authz " + trustMissing}},
		{name: "Shard, allow paths and order, use and trust",
			obj: beta(func(s *operator.ShardSpec) {
				s.Authorization = &operator.AuthorizationSpec{AllowPaths: []string{"/*"}, Order: []string{"AlwaysAllowPaths", "RBAC"}}
			}),
			rights: []string{useRoot, trustRoot}},
		{name: "Shard, other allow paths on update ask trust again",
			obj: beta(func(s *operator.ShardSpec) { s.Authorization = &operator.AuthorizationSpec{AllowPaths: []string{"/*"}} }),
			old: beta(func(s *operator.ShardSpec) {
				s.Authorization = &operator.AuthorizationSpec{AllowPaths: []string{"/healthz"}}
			}),
			rights: []string{useRoot}, forbidden: []string{"spec.authorization to the paths allowed without authorization /* " + trustMissing}},
		{name: "Shard, the same authorization on update asks nothing",
			obj: beta(func(s *operator.ShardSpec) { s.Authorization = &operator.AuthorizationSpec{AllowPaths: []string{"/*"}} }),
			old: beta(func(s *operator.ShardSpec) { s.Authorization = &operator.AuthorizationSpec{AllowPaths: []string{"/*"}} })},
		{name: "Shard joined by a copy, shardBaseURL and plain etcd: get on the copy", obj: beta(func(s *operator.ShardSpec) {
			s.RootShard = operator.RootShardConfig{SecretRef: localRef("root-shard-join")}
			s.ShardBaseURL = "https://beta.example.com"
			s.Etcd.Endpoints = []string{"http://etcd:2379"}
		}), rights: []string{"get secrets root-shard-join"}},
	}
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "eve"})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			authz := &rbac{rights: tc.rights}
			var err error
			switch obj := tc.obj.(type) {
			case *operator.FrontProxy:
				err = store.CheckRequest(ctx, &frontproxy.Kind, authorizer.AuthorizerFunc(authz.Authorize), obj, tc.old)
			case *operator.Shard:
				err = store.CheckRequest(ctx, &shard.Kind, authorizer.AuthorizerFunc(authz.Authorize), obj, tc.old)
			}
			if len(tc.forbidden) == 0 {
				require.NoError(t, err, "asked: %v", authz.asked)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), `user "eve" may not set`)
			for _, s := range tc.forbidden {
				assert.Contains(t, err.Error(), s)
			}
			if !strings.Contains(strings.Join(tc.forbidden, ""), "trust") {
				return
			}
			assert.Contains(t, authz.asked, trustRoot)
		})
	}
}

func TestEtcdEndpointIsTLS(t *testing.T) {
	for _, tc := range []struct {
		endpoint  string
		clientTLS bool
		want      bool
	}{
		{"https://etcd:2379", false, true},
		{"HTTPS://etcd:2379", false, true},
		{"http://etcd:2379", true, false},
		{"unix:///var/run/etcd.sock", true, false},
		{"etcd:2379", false, false},
		{"etcd:2379", true, true},
	} {
		assert.Equal(t, tc.want, store.EtcdEndpointIsTLS(tc.endpoint, tc.clientTLS), "%s (client TLS %v)", tc.endpoint, tc.clientTLS)
	}
}
