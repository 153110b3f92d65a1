package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// frontProxyKind is a Kind over FrontProxies held to the Secrets their auth names, as the
// frontproxy registry holds them.
func frontProxyKind() *Kind[*operator.FrontProxy, operator.FrontProxySpec, operator.FrontProxyStatus] {
	return &Kind[*operator.FrontProxy, operator.FrontProxySpec, operator.FrontProxyStatus]{
		Resource: operator.Resource("frontproxies"),
		Singular: operator.Resource("frontproxy"),
		New:      func() *operator.FrontProxy { return &operator.FrontProxy{} },
		NewList:  func() runtime.Object { return &operator.FrontProxyList{} },
		Spec:     func(o *operator.FrontProxy) *operator.FrontProxySpec { return &o.Spec },
		Status:   func(o *operator.FrontProxy) *operator.FrontProxyStatus { return &o.Status },
		Permissions: func(o *operator.FrontProxy) []Permission {
			spec := field.NewPath("spec")
			return append(ComponentPermissions(&o.Spec.ComponentSpec, spec), AuthPermissions(o.Spec.Auth, spec.Child("auth"))...)
		},
	}
}

func frontProxyWithAuth(auth *operator.AuthSpec) *operator.FrontProxy {
	return &operator.FrontProxy{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "ns"},
		Spec: operator.FrontProxySpec{RootShard: operator.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}, Auth: auth}}
}

// TestAuthSecretsNeedGet: a Secret named in spec.auth is mounted into the component's pods,
// so its author must be allowed to read it (the confused deputy rule).
func TestAuthSecretsNeedGet(t *testing.T) {
	all := &operator.AuthSpec{
		OIDC:           &operator.OIDCConfiguration{IssuerURL: "https://dex", ClientID: "kcp", CAFileRef: &operator.LocalDataKeyReference{Name: "dex-ca", Key: "ca.crt"}},
		Webhook:        &operator.AuthWebhookSpec{ConfigSecretName: "authn-hook"},
		TokenAuthFile:  &operator.TokenAuthFileSpec{SecretName: "tokens", Key: "token.csv"},
		ServiceAccount: &operator.ServiceAccountAuthentication{Enabled: true},
	}
	tests := []struct {
		name      string
		obj, old  *operator.FrontProxy
		allow     []string
		forbidden []string
		asked     int
	}{
		{name: "no auth", obj: frontProxyWithAuth(nil)},
		{name: "service accounts only: the server's own Secrets", obj: frontProxyWithAuth(&operator.AuthSpec{ServiceAccount: all.ServiceAccount})},
		{
			name: "every Secret denied", obj: frontProxyWithAuth(all), asked: 3,
			forbidden: []string{
				`spec.auth.oidc.caFileRef to Secret/dex-ca without get on secrets "dex-ca"`,
				`spec.auth.webhook.configSecretName to Secret/authn-hook without get on secrets "authn-hook"`,
				`spec.auth.tokenAuthFile.secretName to Secret/tokens without get on secrets "tokens"`,
			},
		},
		{
			name: "every Secret granted", obj: frontProxyWithAuth(all), asked: 3,
			allow: []string{"get secrets. dex-ca", "get secrets. authn-hook", "get secrets. tokens"},
		},
		{
			name: "one denied", obj: frontProxyWithAuth(all), asked: 3,
			allow:     []string{"get secrets. dex-ca", "get secrets. authn-hook"},
			forbidden: []string{"spec.auth.tokenAuthFile.secretName to Secret/tokens"},
		},
		{name: "unchanged on update", obj: frontProxyWithAuth(all), old: frontProxyWithAuth(all)},
		{
			name: "the token file moved to another Secret", obj: frontProxyWithAuth(&operator.AuthSpec{TokenAuthFile: &operator.TokenAuthFileSpec{SecretName: "admin-tokens"}}),
			old: frontProxyWithAuth(all), asked: 1, forbidden: []string{"Secret/admin-tokens"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &grants{allow: map[string]bool{}}
			for _, a := range tc.allow {
				g.allow[a] = true
			}
			ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "mallory"})
			a := newAdmitter(frontProxyKind(), authorizer.AuthorizerFunc(g.Authorize))
			var err error
			if tc.old == nil {
				err = a.create(nil)(ctx, tc.obj)
			} else {
				err = a.update(nil)(ctx, tc.obj, tc.old)
			}
			assert.Len(t, g.asked, tc.asked, "asked: %v", g.asked)
			if len(tc.forbidden) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, s := range tc.forbidden {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}
