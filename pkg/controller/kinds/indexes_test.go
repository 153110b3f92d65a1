package kinds

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	opfake "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/fake"
	informers "github.com/kcp-setups/apiserver/pkg/generated/informers/externalversions"
)

// indexOf is what the index of the cache of obj's kind holds for it: nothing when its kind
// contributes no such index, or it is none of ours.
func indexOf(index string, obj any) ([]string, error) {
	for _, k := range All {
		if f := k.IndexersOf()[index]; k.Owns(obj) && f != nil {
			return f(obj)
		}
	}
	return nil, nil
}

func ref(name string) *corev1.LocalObjectReference { return &corev1.LocalObjectReference{Name: name} }

func inTeamA(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: "team-a", Name: name}
}

// TestIndexers: each index holds exactly the values its kinds' objects name, and nothing for
// the kinds it does not index.
func TestIndexers(t *testing.T) {
	joined := &operatorv1alpha1.Shard{ObjectMeta: inTeamA("joined"), Spec: operatorv1alpha1.ShardSpec{
		RootShard: operatorv1alpha1.RootShardConfig{SecretRef: ref("root-shard-join")},
		Cache:     &operatorv1alpha1.CacheConfig{SecretRef: ref("cache-cache-client")}}}
	referenced := &operatorv1alpha1.Shard{ObjectMeta: inTeamA("beta"), Spec: operatorv1alpha1.ShardSpec{
		RootShard:       operatorv1alpha1.RootShardConfig{Reference: ref("root")},
		CommonShardSpec: operatorv1alpha1.CommonShardSpec{KcpVirtualWorkspace: ref("beta-vw")}}}
	rs := &operatorv1alpha1.RootShard{ObjectMeta: inTeamA("root"), Spec: operatorv1alpha1.RootShardSpec{
		CommonShardSpec: operatorv1alpha1.CommonShardSpec{KcpVirtualWorkspace: ref("root-vw")},
		Cache:           &operatorv1alpha1.CacheConfig{SecretRef: ref("cache-cache-client")}}}
	ownPKI := &operatorv1alpha1.RootShard{ObjectMeta: inTeamA("own"), Spec: operatorv1alpha1.RootShardSpec{
		Certificates: &operatorv1alpha1.Certificates{CASecretRef: ref("company-ca")}}}
	edge := &operatorv1alpha1.FrontProxy{ObjectMeta: inTeamA("edge"), Spec: operatorv1alpha1.FrontProxySpec{
		RootShard: operatorv1alpha1.RootShardConfig{Reference: ref("root")}}}
	joinedEdge := &operatorv1alpha1.FrontProxy{ObjectMeta: inTeamA("joined-edge"), Spec: operatorv1alpha1.FrontProxySpec{
		RootShard: operatorv1alpha1.RootShardConfig{SecretRef: ref("root-front-proxy-join")}}}
	cs := &operatorv1alpha1.CacheServer{ObjectMeta: inTeamA("cache")}
	csOwnPKI := &operatorv1alpha1.CacheServer{ObjectMeta: inTeamA("cache-2"), Spec: operatorv1alpha1.CacheServerSpec{Certificates: &operatorv1alpha1.Certificates{}}}
	toShard := &operatorv1alpha1.Kubeconfig{ObjectMeta: inTeamA("to-beta"), Spec: operatorv1alpha1.KubeconfigSpec{
		Target: operatorv1alpha1.KubeconfigTarget{ShardRef: ref("beta")}}}
	toCopy := &operatorv1alpha1.Kubeconfig{ObjectMeta: inTeamA("to-copy"), Spec: operatorv1alpha1.KubeconfigSpec{
		Target: operatorv1alpha1.KubeconfigTarget{RootShardSecretRef: ref("root-kubeconfig-issuer")}}}
	vwOfShard := &operatorv1alpha1.VirtualWorkspace{ObjectMeta: inTeamA("beta-vw"), Spec: operatorv1alpha1.VirtualWorkspaceSpec{
		Target: operatorv1alpha1.VirtualWorkspaceTarget{ShardRef: ref("beta")}}}
	vwOfRoot := &operatorv1alpha1.VirtualWorkspace{ObjectMeta: inTeamA("root-vw"), Spec: operatorv1alpha1.VirtualWorkspaceSpec{
		Target: operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: ref("root")}}}

	for _, tc := range []struct {
		name  string
		index string
		obj   any
		want  []string
	}{
		{"a Shard's RootShard", controller.RootShardIndex, referenced, []string{"team-a/root"}},
		{"a joined Shard has none", controller.RootShardIndex, joined, nil},
		{"a FrontProxy's RootShard", controller.RootShardIndex, edge, []string{"team-a/root"}},
		{"a joined FrontProxy has none", controller.RootShardIndex, joinedEdge, nil},
		{"RootShards are not indexed by RootShard", controller.RootShardIndex, rs, nil},
		{"a Link's RootShard", controller.RootShardIndex, &operatorv1alpha1.Link{ObjectMeta: inTeamA("eu-1"),
			Spec: operatorv1alpha1.LinkSpec{RootShardRef: corev1.LocalObjectReference{Name: "root"}}}, []string{"team-a/root"}},
		{"a Link is not indexed by the Secrets it makes", controller.UsersSecretIndex, &operatorv1alpha1.Link{ObjectMeta: inTeamA("eu-1"),
			Spec: operatorv1alpha1.LinkSpec{RootShardRef: corev1.LocalObjectReference{Name: "root"}}}, nil},
		{"a Shard's VirtualWorkspace", controller.VirtualWorkspaceIndex, referenced, []string{"team-a/beta-vw"}},
		{"a RootShard's VirtualWorkspace", controller.VirtualWorkspaceIndex, rs, []string{"team-a/root-vw"}},
		{"none named", controller.VirtualWorkspaceIndex, joined, nil},
		{"a joined Shard's shard-join and cache-client copies", controller.ReferenceSecretIndex, joined, []string{"team-a/cache-cache-client", "team-a/root-shard-join"}},
		{"a RootShard's cache-client copy", controller.ReferenceSecretIndex, rs, []string{"team-a/cache-cache-client"}},
		{"a FrontProxy's front-proxy-join copy", controller.ReferenceSecretIndex, joinedEdge, []string{"team-a/root-front-proxy-join"}},
		{"a referenced FrontProxy names no copy", controller.ReferenceSecretIndex, edge, nil},
		{"Kubeconfigs are not indexed by copy: their target is", controller.ReferenceSecretIndex, toCopy, nil},
		{"a Kubeconfig toward a Shard", controller.TargetIndex, toShard, []string{"team-a/Shard/beta"}},
		{"a Kubeconfig toward a copy", controller.TargetIndex, toCopy, []string{"team-a/Secret/root-kubeconfig-issuer"}},
		{"a Kubeconfig without a target", controller.TargetIndex, &operatorv1alpha1.Kubeconfig{ObjectMeta: inTeamA("x")}, nil},
		{"a VirtualWorkspace of a Shard", controller.TargetIndex, vwOfShard, []string{"team-a/shard/beta"}},
		{"a VirtualWorkspace of a RootShard", controller.TargetIndex, vwOfRoot, []string{"team-a/rootshard/root"}},
		{"a RootShard on the bootstrap PKI", controller.BootstrapIndex, rs, []string{"team-a"}},
		{"a RootShard with its own PKI", controller.BootstrapIndex, ownPKI, nil},
		{"a CacheServer on the bootstrap PKI", controller.BootstrapIndex, cs, []string{"team-a"}},
		{"a CacheServer with its own PKI", controller.BootstrapIndex, csOwnPKI, nil},
		{"Shards are not on the bootstrap PKI", controller.BootstrapIndex, referenced, nil},
		{"a Secret is none of ours", controller.UsersSecretIndex, &corev1.Secret{ObjectMeta: inTeamA("x")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := indexOf(tc.index, tc.obj)
			require.NoError(t, err)
			sort.Strings(got)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestUsersSecretIndex: the index of the Secrets an object's pods mount holds the users'
// Secrets each kind names, and a Shard's holds those its own spec names, not those of its
// RootShard's spec.
func TestUsersSecretIndex(t *testing.T) {
	etcdTLS := operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd:2379"}, TLSConfig: &operatorv1alpha1.EtcdTLSConfig{SecretRef: corev1.LocalObjectReference{Name: "etcd-client"}}}
	oidc := &operatorv1alpha1.AuthSpec{OIDC: &operatorv1alpha1.OIDCConfiguration{IssuerURL: "https://idp", ClientID: "kcp",
		CAFileRef: &operatorv1alpha1.LocalDataKeyReference{Name: "idp-ca", Key: "ca.crt"}}}
	for _, tc := range []struct {
		name    string
		obj     any
		holds   []string
		lacks   []string
		nothing bool
	}{
		{name: "a RootShard: its etcd TLS, its CA, its bundles", obj: &operatorv1alpha1.RootShard{ObjectMeta: inTeamA("root"), Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{Etcd: etcdTLS, CABundleSecretRef: ref("partner-ca"), ClientCABundleRef: ref("partner-clients")},
			Certificates:    &operatorv1alpha1.Certificates{CASecretRef: ref("company-ca")}}},
			holds: []string{"etcd-client", "company-ca", "partner-ca", "partner-clients"}},
		{name: "a Shard: its etcd TLS and bundle, not its RootShard's CA", obj: &operatorv1alpha1.Shard{ObjectMeta: inTeamA("beta"), Spec: operatorv1alpha1.ShardSpec{
			RootShard:       operatorv1alpha1.RootShardConfig{Reference: ref("root")},
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{Etcd: etcdTLS, CABundleSecretRef: ref("partner-ca")}}},
			holds: []string{"etcd-client", "partner-ca", "root-ca"}, lacks: []string{"company-ca"}},
		{name: "a joined Shard", obj: &operatorv1alpha1.Shard{ObjectMeta: inTeamA("joined"), Spec: operatorv1alpha1.ShardSpec{
			RootShard: operatorv1alpha1.RootShardConfig{SecretRef: ref("root-shard-join")}, CommonShardSpec: operatorv1alpha1.CommonShardSpec{Etcd: etcdTLS}}},
			holds: []string{"etcd-client"}},
		{name: "a FrontProxy: its OIDC CA and bundles", obj: &operatorv1alpha1.FrontProxy{ObjectMeta: inTeamA("edge"), Spec: operatorv1alpha1.FrontProxySpec{
			Auth: oidc, ClientCABundleRef: ref("partner-clients")}},
			holds: []string{"idp-ca", "partner-clients"}},
		{name: "a CacheServer: its etcd TLS", obj: &operatorv1alpha1.CacheServer{ObjectMeta: inTeamA("cache"), Spec: operatorv1alpha1.CacheServerSpec{
			Etcd: &operatorv1alpha1.EtcdConfig{TLSConfig: &operatorv1alpha1.EtcdTLSConfig{SecretRef: corev1.LocalObjectReference{Name: "etcd-client"}}}}},
			holds: []string{"etcd-client"}},
		{name: "a VirtualWorkspace: its kubeconfig and bundle", obj: &operatorv1alpha1.VirtualWorkspace{ObjectMeta: inTeamA("vw"), Spec: operatorv1alpha1.VirtualWorkspaceSpec{
			KubeconfigSecretRef: ref("narrow-identity"), CABundleSecretRef: ref("partner-ca")}},
			holds: []string{"narrow-identity", "partner-ca"}},
		{name: "a Kubeconfig mounts nothing", obj: &operatorv1alpha1.Kubeconfig{ObjectMeta: inTeamA("kc")}, nothing: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := indexOf(controller.UsersSecretIndex, tc.obj)
			require.NoError(t, err)
			if tc.nothing {
				assert.Empty(t, got)
			}
			for _, name := range tc.holds {
				assert.Contains(t, got, "team-a/"+name)
			}
			for _, name := range tc.lacks {
				assert.NotContains(t, got, "team-a/"+name)
			}
		})
	}
}

// TestAddIndexesOnce: every controller calls AddIndexes on the shared informers; the first
// registers the indexes, the others find them, and the caches answer through them.
func TestAddIndexesOnce(t *testing.T) {
	inf := controller.Informers{Ours: informers.NewSharedInformerFactory(opfake.NewSimpleClientset(), 0),
		Kube: kubeinformers.NewSharedInformerFactory(kubefake.NewSimpleClientset(), 0)}
	first, err := All.AddIndexes(inf)
	require.NoError(t, err)
	second, err := All.AddIndexes(inf)
	require.NoError(t, err, "a second controller finds the indexes")
	assert.Same(t, Shard.Cache(first), Shard.Cache(second))
	for _, k := range All {
		require.NotNil(t, first[k.KindName()], "a cache of every kind")
		for name := range k.IndexersOf() {
			assert.Contains(t, first[k.KindName()].GetIndexers(), name, "%s contributes %s", k.KindName(), name)
		}
	}
	assert.Contains(t, Shard.Cache(first).GetIndexers(), cache.NamespaceIndex, "the informer's own index stays")

	shardOf := func(ns, name, rs string) *operatorv1alpha1.Shard {
		return &operatorv1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: operatorv1alpha1.ShardSpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: ref(rs)}}}
	}
	for _, s := range []*operatorv1alpha1.Shard{shardOf("team-a", "s1", "root"), shardOf("team-a", "s2", "root"),
		shardOf("team-a", "s3", "other"), shardOf("team-b", "s4", "root")} {
		require.NoError(t, Shard.Cache(first).Add(s))
	}
	keys := ShardKeysOf(first, "team-a", "root")
	sort.Strings(keys)
	assert.Equal(t, []string{"team-a/s1", "team-a/s2"}, keys, "a RootShard's Shards, in its namespace")
	assert.Len(t, ShardsOf(first, "team-b", "root"), 1)
	assert.Empty(t, ShardsOf(first, "team-a", "nobody"))
	assert.Len(t, controller.InNamespace(Shard.Cache(first), "team-a"), 3)
}

// TestIndexQueries: a nil cache is an empty one; a cache without the index answers nothing,
// and says why to whoever asks; Matching keeps each match once.
func TestIndexQueries(t *testing.T) {
	var none controller.Indexes
	assert.Nil(t, ShardsOf(none, "team-a", "root"))
	assert.Nil(t, FrontProxiesOf(none, "team-a", "root"))
	assert.Nil(t, controller.Keys(nil, controller.RootShardIndex, "team-a/root"))
	got, err := controller.IndexedOrError[*operatorv1alpha1.Shard](nil, controller.RootShardIndex, "team-a/root")
	assert.NoError(t, err)
	assert.Empty(t, got)

	bare := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	require.NoError(t, bare.Add(&operatorv1alpha1.Shard{ObjectMeta: inTeamA("s1")}))
	assert.Nil(t, controller.Keys(bare, controller.RootShardIndex, "team-a/root"))
	_, err = controller.IndexedOrError[*operatorv1alpha1.Shard](bare, controller.RootShardIndex, "team-a/root")
	assert.Error(t, err, "a cache without the index cannot tell")

	s1, s2 := &operatorv1alpha1.Shard{ObjectMeta: inTeamA("s1")}, &operatorv1alpha1.Shard{ObjectMeta: inTeamA("s2")}
	assert.Equal(t, []string{"team-a/s1"}, controller.Matching([]*operatorv1alpha1.Shard{s1, s2, s1}, func(s *operatorv1alpha1.Shard) bool { return s.Name == "s1" }))
}
