package kinds

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// TestEveryAuthenticationSettingReachesTheFlagsTheIndexAndTheAdmissionCheck: each setting of
// kcp.AuthenticationSettings, set on a RootShard, a Shard and a FrontProxy, is in kcp's and
// kcp-front-proxy's flags, its Secret in the watch index of users' Secrets (whose events
// roll the pods), and in the admission check that holds the author to reading it, at the
// field that names it. A setting one of them misses is a flag never given, a Secret not
// followed, or a Secret mounted that its author may not read.
func TestEveryAuthenticationSettingReachesTheFlagsTheIndexAndTheAdmissionCheck(t *testing.T) {
	auth := &operatorv1alpha1.AuthSpec{
		OIDC: &operatorv1alpha1.OIDCConfiguration{IssuerURL: "https://dex", ClientID: "kcp",
			CAFileRef: &operatorv1alpha1.LocalDataKeyReference{Name: "dex-ca", Key: "ca.crt"}},
		Webhook:       &operatorv1alpha1.AuthWebhookSpec{ConfigSecretName: "authn-hook"},
		TokenAuthFile: &operatorv1alpha1.TokenAuthFileSpec{SecretName: "tokens", Key: "token.csv"},
	}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "team-a", Name: name} }
	rs := &operatorv1alpha1.RootShard{ObjectMeta: meta("root")}
	rs.Spec.Auth = auth
	s := &operatorv1alpha1.Shard{ObjectMeta: meta("eu"),
		Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}}}
	s.Spec.Auth = auth
	fp := &operatorv1alpha1.FrontProxy{ObjectMeta: meta("edge"), Spec: operatorv1alpha1.FrontProxySpec{Auth: auth}}

	flags := map[string][]string{
		"RootShard":  rootshard.Server(rs).Args(),
		"Shard":      shard.Server(s, rs).Args(),
		"FrontProxy": frontproxy.FrontProxy{FrontProxy: fp, RootShard: rs}.Args(),
	}
	indexed := map[string][]string{}
	for kind, obj := range map[string]any{"RootShard": rs, "Shard": s, "FrontProxy": fp} {
		values, err := indexOf(controller.UsersSecretIndex, obj)
		require.NoError(t, err)
		indexed[kind] = values
	}
	internal := &operator.AuthSpec{}
	require.NoError(t, operatorv1alpha1.Convert_v1alpha1_AuthSpec_To_operator_AuthSpec(auth, internal, nil))
	admitted := store.AuthPermissions(internal, field.NewPath("spec", "auth"))

	require.NotEmpty(t, kcp.AuthenticationSettings)
	for i, setting := range kcp.AuthenticationSettings {
		f := setting(auth)
		require.NotEmpty(t, f.Args, "setting %d: the fixture sets every setting", i)
		require.NotEmpty(t, f.Mounts, "setting %d", i)
		for kind, args := range flags {
			for _, arg := range f.Args {
				assert.Contains(t, args, arg, "%s: the flag of setting %d", kind, i)
			}
		}
		for _, m := range f.Mounts {
			require.True(t, m.User, m.Volume)
			for kind, values := range indexed {
				assert.Contains(t, values, controller.IndexValue("team-a", m.Secret), "%s: the watch of users' Secrets follows %s", kind, m.Secret)
			}
			assert.True(t, slices.ContainsFunc(admitted, func(p store.Permission) bool {
				return p.Verb == "get" && p.Resource == "secrets" && p.Name == m.Secret && p.Field == "spec.auth."+m.Field
			}), "the admission check holds spec.auth.%s to reading the Secret %s: %+v", m.Field, m.Secret, admitted)
		}
	}
}
