package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestAuthWarnings(t *testing.T) {
	withSecret := &operator.AuthSpec{OIDC: &operator.OIDCConfiguration{IssuerURL: "https://dex.example.com", ClientID: "kcp", ClientSecret: "s"}}
	groups := &operator.AuthSpec{DropGroups: []string{"system:masters"}, PassOnGroups: []string{"team-a"}}
	const clientSecret = "spec.auth.oidc.clientSecret is deprecated in kcp-operator and ignored: kube's OIDC authentication needs no client secret"

	assert.Empty(t, RootShardWarnings(&operator.RootShard{}))
	assert.Empty(t, FrontProxyWarnings(&operator.FrontProxy{}))
	assert.Equal(t, []string{clientSecret}, RootShardWarnings(&operator.RootShard{Spec: operator.RootShardSpec{CommonShardSpec: operator.CommonShardSpec{Auth: withSecret}}}))
	assert.Equal(t, []string{clientSecret}, ShardWarnings(&operator.Shard{Spec: operator.ShardSpec{CommonShardSpec: operator.CommonShardSpec{Auth: withSecret}}}))
	assert.Equal(t, []string{clientSecret}, FrontProxyWarnings(&operator.FrontProxy{Spec: operator.FrontProxySpec{Auth: withSecret}}))

	assert.Equal(t, []string{
		"spec.auth.dropGroups has no effect on a RootShard or Shard: it only takes effect on a FrontProxy",
		"spec.auth.passOnGroups has no effect on a RootShard or Shard: it only takes effect on a FrontProxy",
	}, ShardWarnings(&operator.Shard{Spec: operator.ShardSpec{CommonShardSpec: operator.CommonShardSpec{Auth: groups}}}))
	assert.Empty(t, FrontProxyWarnings(&operator.FrontProxy{Spec: operator.FrontProxySpec{Auth: groups}}), "where the groups act")
}
