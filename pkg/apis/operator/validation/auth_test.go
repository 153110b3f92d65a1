package validation

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestValidateAuth(t *testing.T) {
	oidc := func(mutate func(*operator.OIDCConfiguration)) *operator.AuthSpec {
		o := &operator.OIDCConfiguration{
			IssuerURL: "https://dex.example.com/dex", ClientID: "kcp", GroupsClaim: "groups", UsernamePrefix: "oidc:",
			CAFileRef: &operator.LocalDataKeyReference{Name: "dex-ca", Key: "ca.crt"},
		}
		mutate(o)
		return &operator.AuthSpec{OIDC: o}
	}
	tests := []struct {
		name string
		auth *operator.AuthSpec
		want []wantErr
	}{
		{name: "absent"},
		{name: "OIDC", auth: oidc(func(*operator.OIDCConfiguration) {})},
		{name: "service accounts only", auth: &operator.AuthSpec{ServiceAccount: &operator.ServiceAccountAuthentication{Enabled: true}}},
		{
			name: "issuer URL missing",
			auth: oidc(func(o *operator.OIDCConfiguration) { o.IssuerURL = "" }),
			want: []wantErr{required("spec.auth.oidc.issuerURL")},
		},
		{
			name: "issuer URL not https",
			auth: oidc(func(o *operator.OIDCConfiguration) { o.IssuerURL = "http://dex.example.com" }),
			want: []wantErr{invalid("spec.auth.oidc.issuerURL")},
		},
		{
			name: "client ID missing",
			auth: oidc(func(o *operator.OIDCConfiguration) { o.ClientID = "" }),
			want: []wantErr{required("spec.auth.oidc.clientID")},
		},
		{
			name: "CA file reference incomplete",
			auth: oidc(func(o *operator.OIDCConfiguration) { o.CAFileRef = &operator.LocalDataKeyReference{Name: "Dex CA"} }),
			want: []wantErr{invalid("spec.auth.oidc.caFileRef.name")},
		},
		{
			name: "CA file key left to its default",
			auth: oidc(func(o *operator.OIDCConfiguration) { o.CAFileRef.Key = "" }),
		},
		{
			name: "client secret, deprecated, is accepted",
			auth: oidc(func(o *operator.OIDCConfiguration) { o.ClientSecret = "s3cr3t" }),
		},
		{
			name: "token webhook",
			auth: &operator.AuthSpec{Webhook: &operator.AuthWebhookSpec{ConfigSecretName: "authn-hook",
				CacheAuthenticationTTL: &metav1.Duration{Duration: 2 * time.Minute}, Version: "v1beta1"}},
		},
		{name: "token webhook, TTL zero", auth: &operator.AuthSpec{Webhook: &operator.AuthWebhookSpec{ConfigSecretName: "h", CacheAuthenticationTTL: &metav1.Duration{}}}},
		{
			name: "token webhook, everything wrong",
			auth: &operator.AuthSpec{Webhook: &operator.AuthWebhookSpec{ConfigSecretName: "Authn Hook",
				CacheAuthenticationTTL: &metav1.Duration{Duration: -time.Second}, Version: "v2"}},
			want: []wantErr{
				invalid("spec.auth.webhook.configSecretName"),
				invalid("spec.auth.webhook.cacheAuthenticationTTL"),
				notSupported("spec.auth.webhook.version"),
			},
		},
		{
			name: "token webhook without its Secret",
			auth: &operator.AuthSpec{Webhook: &operator.AuthWebhookSpec{}},
			want: []wantErr{required("spec.auth.webhook.configSecretName")},
		},
		{name: "token file", auth: &operator.AuthSpec{TokenAuthFile: &operator.TokenAuthFileSpec{SecretName: "tokens", Key: "users.csv"}}},
		{name: "token file, key left to its default", auth: &operator.AuthSpec{TokenAuthFile: &operator.TokenAuthFileSpec{SecretName: "tokens"}}},
		{
			name: "token file, invalid",
			auth: &operator.AuthSpec{TokenAuthFile: &operator.TokenAuthFileSpec{Key: "a/b"}},
			want: []wantErr{required("spec.auth.tokenAuthFile.secretName"), invalid("spec.auth.tokenAuthFile.key")},
		},
		{
			name: "CA file key not a valid key",
			auth: oidc(func(o *operator.OIDCConfiguration) { o.CAFileRef.Key = "ca/crt" }),
			want: []wantErr{invalid("spec.auth.oidc.caFileRef.key")},
		},
		{
			name: "groups",
			auth: &operator.AuthSpec{DropGroups: []string{"system:masters"}, PassOnGroups: []string{"team-a", "team-b"}},
		},
		{
			name: "empty groups and groups with commas",
			auth: &operator.AuthSpec{DropGroups: []string{"", "a,b"}, PassOnGroups: []string{"c,"}},
			want: []wantErr{
				required("spec.auth.dropGroups[0]"),
				invalid("spec.auth.dropGroups[1]", "may not contain a comma"),
				invalid("spec.auth.passOnGroups[0]"),
			},
		},
		{
			name: "passing on the groups the front proxy always drops",
			auth: &operator.AuthSpec{PassOnGroups: []string{"team-a", "system:masters", "system:kcp:logical-cluster-admin", "system:*"}},
			want: []wantErr{
				forbidden("spec.auth.passOnGroups[1]", "system:masters is always dropped by the front proxy"),
				forbidden("spec.auth.passOnGroups[2]", "system:kcp:logical-cluster-admin is always dropped"),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertErrors(t, tc.want, validateAuth(tc.auth, field.NewPath("spec", "auth")))
		})
	}
}
