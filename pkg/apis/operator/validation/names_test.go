package validation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// TestGeneratedCommonNamesFit builds every Certificate of a RootShard and of a Shard, both with
// a managed etcd, named as long as validation allows, and holds each CommonName to the 64
// characters cert-manager issues: the suffixes names.go allows for are the builders' longest.
// One character more is refused.
func TestGeneratedCommonNamesFit(t *testing.T) {
	managed := operatorv1alpha1.CommonShardSpec{Etcd: operatorv1alpha1.EtcdConfig{Managed: &operatorv1alpha1.ManagedEtcd{}}}
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("r", maxRootShardNameLength), Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{CommonShardSpec: managed, External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com"}}}
	s := &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("s", maxShardNameLength), Namespace: "team-a"},
		Spec: operatorv1alpha1.ShardSpec{CommonShardSpec: managed}}

	longest := map[string]int{}
	for _, c := range rootshard.BuildPKI(rs).Certificates {
		require.NotNil(t, c.Spec.CommonName, *c.Name)
		longest["RootShard"] = max(longest["RootShard"], len(*c.Spec.CommonName))
		assert.LessOrEqual(t, len(*c.Spec.CommonName), MaxCommonNameLength, "the CommonName of %s", *c.Name)
	}
	for _, c := range shard.Certificates(s, rs) {
		require.NotNil(t, c.Spec.CommonName, *c.Name)
		longest["Shard"] = max(longest["Shard"], len(*c.Spec.CommonName))
		assert.LessOrEqual(t, len(*c.Spec.CommonName), MaxCommonNameLength, "the CommonName of %s", *c.Name)
	}
	assert.Equal(t, map[string]int{"RootShard": MaxCommonNameLength, "Shard": MaxCommonNameLength}, longest,
		"the longest CommonName is at the limit: the bound is not stricter than it must be")

	assert.NotEmpty(t, rootShardNameFunc(rs.Name+"r", false))
	assert.NotEmpty(t, shardNameFunc(s.Name+"s", false))
}

// TestReservedNames: no setup is named kcp-pki, whose derived names are the namespace's
// bootstrap PKI, and no Shard root, the name kcp registers the root shard under.
func TestReservedNames(t *testing.T) {
	rs, s, fp, cs := validRootShard(), validShard(), validFrontProxy(), validCacheServer()
	rs.Name, s.Name, fp.Name, cs.Name = "kcp-pki", "kcp-pki", "kcp-pki", "kcp-pki"
	for kind, errs := range map[string]field.ErrorList{
		"RootShard": ValidateRootShard(rs), "Shard": ValidateShard(s), "FrontProxy": ValidateFrontProxy(fp), "CacheServer": ValidateCacheServer(cs),
	} {
		t.Run(kind, func(t *testing.T) {
			assertErrors(t, []wantErr{invalid("metadata.name", "is reserved: the namespace's bootstrap PKI")}, errs)
		})
	}
	s = validShard()
	s.Name = "root"
	assertErrors(t, []wantErr{invalid("metadata.name", "kcp registers the root shard in the root workspace as the Shard root")}, ValidateShard(s))
	rs = validRootShard()
	rs.Name = "root"
	assertErrors(t, nil, ValidateRootShard(rs))
}
